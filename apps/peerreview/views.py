"""Peer-review pages. A group: whom it reviews (their draft once published), the structured form
(save, submit, editable until the due date, version-checked), and the reviews it received once the
due date has passed. Staff: rounds, avoided pairs, exclusions, the pairing as a picture (preview,
re-roll, swap, publish), the completion board, score distributions, peer scores and a CSV."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.calendar.models import Milestone
from apps.calendar.views import local_to_utc
from apps.core import integrity
from apps.core.csvexport import csv_response
from apps.core.errors import Conflict, DomainError, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages
from apps.core.views_helpers import int_or_none as _int
from apps.groups.models import Group
from apps.milestones.models import GroupMilestone
from apps.peerreview import charts, services
from apps.peerreview.models import (
    CRITERIA,
    RECOMMENDATIONS,
    PeerAssignment,
    PeerAvoid,
    PeerExclusion,
    PeerReview,
    PeerRound,
)


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """A group: whom it reviews and its reviews; staff: rounds, pairing and the board (CSV with
    ?format=csv). Every change posts to its own action view below."""
    course = course_for(request, code)
    staff = is_staff(request.user, course)
    if staff and request.GET.get("format") == "csv":
        return _csv(course, _int(request.GET.get("round")))
    return _staff(request, course) if staff else _group(request, course)


def _drafts(r: PeerRound, group_ids: list[int]) -> dict[int, GroupMilestone]:
    return {
        g.group_id: g
        for g in GroupMilestone.objects.filter(milestone=r.milestone, group_id__in=group_ids)
    }


# ------------------------------------------------------------------ a group


def _group(request: AuthedRequest, course: Course) -> HttpResponse:
    group = services.group_of(course, request.user)
    now = timezone.now()
    rounds = []
    for r in PeerRound.objects.filter(course=course, published_at__isnull=False).select_related(
        "milestone"
    ):
        giving = (
            list(PeerAssignment.objects.filter(round=r, reviewer=group).select_related("reviewee"))
            if group
            else []
        )
        drafts = _drafts(r, [a.reviewee_id for a in giving])
        reviews = {
            rv.assignment_id: rv
            for rv in PeerReview.objects.filter(assignment__in=giving).select_related("updated_by")
        }
        received = []
        if group and services.released(r, now):  # server-side: nothing before the due date
            received = list(
                PeerReview.objects.filter(
                    assignment__round=r,
                    assignment__reviewee=group,
                    status=PeerReview.Status.SUBMITTED,
                ).select_related("assignment__reviewer")
            )
        rounds.append(
            {
                "round": r,
                "open": now <= r.due_at,
                "released": services.released(r, now),
                "received": received,
                "received_rows": [
                    (rv, [(label, getattr(rv, key)) for key, label in CRITERIA]) for rv in received
                ],
                "giving": [
                    {
                        "a": a,
                        "draft": drafts.get(a.reviewee_id),
                        "review": reviews.get(a.pk),
                        "fields": [
                            (key, label, getattr(reviews[a.pk], key) if a.pk in reviews else None)
                            for key, label in CRITERIA
                        ],
                    }
                    for a in giving
                ],
            }
        )
    return render(
        request,
        "peerreview/group.html",
        {
            "course": course,
            "group": group,
            "rounds": rounds,
            "criteria": CRITERIA,
            "recommendations": RECOMMENDATIONS,
            "scores": range(1, 6),
            "min_comment": services.MIN_COMMENT,
        },
    )


def _review_save(
    request: AuthedRequest, course: Course, pair_id: int, *, submit: bool
) -> HttpResponseBase:
    fields = [k for k, _ in CRITERIA] + ["strengths", "weaknesses", "suggestions", "recommendation"]
    fields += ["ai_used", "ai_description"]
    data = {k: request.POST.get(k, "") for k in fields}
    version = _int(request.POST.get("version")) or 0
    with errors_as_messages(request):
        try:
            services.review_save(
                actor=request.user,
                course=course,
                assignment_id=pair_id,
                version=version,
                data=data,
                submit=submit,
            )
        except DomainError as exc:
            if not submit or isinstance(exc, Conflict | NotFound):
                raise
            # A submission that is not complete yet keeps what was typed, as a draft.
            services.review_save(
                actor=request.user,
                course=course,
                assignment_id=pair_id,
                version=version,
                data=data,
                submit=False,
            )
            messages.error(request, f"Saved as a draft, not submitted: {exc.message}")
        else:
            messages.success(
                request,
                "Review submitted; you can still edit it until the due date."
                if submit
                else "Draft saved.",
            )
    return redirect("peerreview:page", code=course.code)


@course_action(student=True)
def review_save(request: AuthedRequest, course: Course, pair_id: int) -> HttpResponseBase:
    """A member of the reviewing group saves the group's review as a draft."""
    return _review_save(request, course, pair_id, submit=False)


@course_action(student=True)
def review_submit(request: AuthedRequest, course: Course, pair_id: int) -> HttpResponseBase:
    """A member submits the group's review (still editable until the due date)."""
    return _review_save(request, course, pair_id, submit=True)


# ------------------------------------------------------------------ staff


def _staff(request: AuthedRequest, course: Course) -> HttpResponse:
    rounds = list(PeerRound.objects.filter(course=course).select_related("milestone"))
    chosen = next(
        (r for r in rounds if r.pk == _int(request.GET.get("round"))),
        rounds[-1] if rounds else None,
    )
    ctx: dict[str, Any] = {
        "course": course,
        "rounds": rounds,
        "r": chosen,
        "milestones": (ms := list(Milestone.objects.filter(course=course).order_by("due_at"))),
        "default_milestone": next((m.pk for m in ms if "draft" in m.name.lower()), None),
        "groups": Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name"),
    }
    if chosen is not None:
        names = {g.pk: g.name for g in services.groups_in(chosen)}
        if chosen.published_at:
            assignments = list(
                PeerAssignment.objects.filter(round=chosen).select_related("reviewer", "reviewee")
            )
            pairs = [(a.reviewer_id, a.reviewee_id) for a in assignments]
            names.update(
                {a.reviewer_id: a.reviewer.name for a in assignments}
                | {a.reviewee_id: a.reviewee.name for a in assignments}
            )
        else:
            assignments, pairs = [], [(a, b) for a, b in chosen.proposal]
        reviews = {
            rv.assignment_id: rv for rv in PeerReview.objects.filter(assignment__round=chosen)
        }
        now = timezone.now()
        board: list[dict[str, Any]] = [
            {
                "a": a,
                "review": reviews.get(a.pk),
                "late": now > chosen.due_at
                and (a.pk not in reviews or reviews[a.pk].status != "submitted"),
            }
            for a in assignments
        ]
        submitted = [rv for rv in reviews.values() if rv.status == PeerReview.Status.SUBMITTED]
        dist = [
            (label, [sum(1 for rv in submitted if getattr(rv, key) == s) for s in range(1, 6)])
            for key, label in CRITERIA
        ]
        scores = services.peer_scores(chosen)
        drafts = _drafts(chosen, list(names))
        ctx.update(
            names=sorted(names.items(), key=lambda x: x[1]),
            proposal=[(names.get(a, a), names.get(b, b)) for a, b in pairs][:60],
            proposal_total=len(pairs),
            pairing_svg=mark_safe(charts.pairing_svg(names, pairs)),
            board=Paginator(board, 100).get_page(request.GET.get("page")),
            board_total=len(board),
            dist_svg=mark_safe(charts.distributions_svg(dist)) if submitted else "",
            peer_scores=sorted(
                ((names.get(g, g), s) for g, s in scores.items()), key=lambda x: str(x[0])
            ),
            avoids=PeerAvoid.objects.filter(round=chosen).select_related("group_a", "group_b"),
            exclusions=PeerExclusion.objects.filter(round=chosen).select_related("group"),
            no_draft=[
                n
                for g, n in sorted(names.items(), key=lambda x: x[1])
                if g not in drafts or not drafts[g].submitted_at
            ],
            done=sum(1 for rv in reviews.values() if rv.status == PeerReview.Status.SUBMITTED),
        )
    return render(request, "peerreview/staff.html", ctx)


def _to_round(course: Course, round_id: int) -> HttpResponseBase:
    return redirect(f"/c/{course.code}/peer-review/?round={round_id}")


@course_action(staff=True)
def round_create(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff open a review round for a report milestone, with its due date in course time."""
    round_id = 0
    with errors_as_messages(request):
        text = request.POST.get("due_at", "").strip()
        try:
            due = local_to_utc(dt.datetime.fromisoformat(text), course.tz)
        except (ValueError, OverflowError):
            raise DomainError("Give the review due date as a date and time.") from None
        r = services.round_create(
            actor=request.user,
            course=course,
            milestone_id=_int(request.POST.get("milestone")) or 0,
            due_at=due,
            k=_int(request.POST.get("k")) or 1,
            show_reviewers=request.POST.get("show_reviewers") == "on",
            title=request.POST.get("title", "").strip(),
        )
        round_id = r.pk
        messages.success(request, "Round created. Add pairs to avoid, then preview the pairing.")
    return _to_round(course, round_id)


def _preview(
    request: AuthedRequest, course: Course, round_id: int, *, seed: int | None
) -> HttpResponseBase:
    with errors_as_messages(request):
        result = services.preview(actor=request.user, course=course, round_id=round_id, seed=seed)
        if not result.ok:
            messages.error(request, "No pairing exists: " + "; ".join(result.reasons))
        else:
            used = services.round_get(course, round_id).seed
            shared = (
                f"; {result.soft_violations} pair(s) met in an earlier round or shared a "
                "sharing window: unavoidable."
                if result.soft_violations
                else "."
            )
            messages.success(request, f"Pairing for seed {used} ({result.method}){shared}")
    return _to_round(course, round_id)


@course_action(staff=True)
def round_preview(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff pair the groups with the seed given (the same seed, the same pairing)."""
    return _preview(request, course, round_id, seed=_int(request.POST.get("seed")))


@course_action(staff=True)
def round_reroll(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff pair again with the next seed."""
    with errors_as_messages(request):
        seed = services.round_get(course, round_id).seed + 1
        return _preview(request, course, round_id, seed=seed)
    return _to_round(course, round_id)


@course_action(staff=True)
def avoid_add(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff name two groups that must not review each other, with a reason."""
    with errors_as_messages(request):
        services.avoid_add(
            actor=request.user,
            course=course,
            round_id=round_id,
            group_a=_int(request.POST.get("group_a")) or 0,
            group_b=_int(request.POST.get("group_b")) or 0,
            reason=request.POST.get("reason", ""),
        )
        messages.success(request, "Pair added to avoid; preview again.")
    return _to_round(course, round_id)


@course_action(staff=True)
def group_exclude(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff leave a group out of the round (e.g. no draft); the rest are re-paired."""
    with errors_as_messages(request):
        group_id = _int(request.POST.get("group"))
        if group_id is None:
            raise DomainError("Choose the group to leave out.", field="group")
        changed = services.exclude(
            actor=request.user,
            course=course,
            round_id=round_id,
            group_id=group_id,
            reason=request.POST.get("reason", ""),
        )
        messages.success(
            request,
            f"Group left out; {changed} pair(s) changed." if changed else "Group left out.",
        )
    return _to_round(course, round_id)


@course_action(staff=True)
def proposal_swap(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff swap two reviewers' targets in the proposal, if every rule still holds."""
    with errors_as_messages(request):
        services.proposal_swap(
            actor=request.user,
            course=course,
            round_id=round_id,
            reviewer_a=_int(request.POST.get("a")) or 0,
            reviewer_b=_int(request.POST.get("b")) or 0,
        )
        messages.success(request, "Swapped; every rule still holds.")
    return _to_round(course, round_id)


@course_action(staff=True)
def round_publish(request: AuthedRequest, course: Course, round_id: int) -> HttpResponseBase:
    """Staff publish the pairing after confirming; every group is e-mailed whom it reviews."""
    with errors_as_messages(request):
        if request.POST.get("confirm") != "yes":
            raise DomainError("Tick the box to confirm: every group is e-mailed whom it reviews.")
        n = services.publish(
            actor=request.user,
            course=course,
            round_id=round_id,
            without_drafts=request.POST.get("without_drafts") == "yes",
        )
        messages.success(request, f"Published {n} review assignments; groups are being e-mailed.")
    return _to_round(course, round_id)


def _csv(course: Course, round_id: int | None) -> HttpResponseBase:
    rows = PeerReview.objects.filter(assignment__round__course=course).select_related(
        "assignment__reviewer", "assignment__reviewee", "assignment__round"
    )
    if round_id:
        rows = rows.filter(assignment__round_id=round_id)
    header = [
        "round",
        "reviewer",
        "reviewed",
        "status",
        *[k for k, _ in CRITERIA],
        "recommendation",
        "strengths",
        "weaknesses",
        "suggestions",
        "submitted_at",
        *integrity.EXPORT_HEADER,
    ]
    body = (
        [
            rv.assignment.round.title,
            rv.assignment.reviewer.name,
            rv.assignment.reviewee.name,
            rv.status,
            *[getattr(rv, k) or "" for k, _ in CRITERIA],
            rv.recommendation,
            rv.strengths,
            rv.weaknesses,
            rv.suggestions,
            rv.submitted_at.isoformat() if rv.submitted_at else "",
            *integrity.export_cells(rv),
        ]
        for rv in rows.iterator(chunk_size=500)
    )
    return csv_response(f"{course.code}-peer-reviews.csv", itertools.chain([header], body))
