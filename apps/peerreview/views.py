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

from apps.calendar.models import Milestone
from apps.calendar.views import local_to_utc
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_for
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
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    staff = is_staff(request.user, course)
    if request.method == "POST":
        return (_staff_post if staff else _group_post)(request, course)
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


def _group_post(request: AuthedRequest, course: Course) -> HttpResponseBase:
    user: User = request.user
    if _int(request.POST.get("assignment")) is None:
        messages.error(request, "Save a review from its form.")
        return redirect("peerreview:page", code=course.code)
    data = {k: request.POST.get(k, "") for k, _ in CRITERIA}
    data.update(
        {
            k: request.POST.get(k, "")
            for k in ("strengths", "weaknesses", "suggestions", "recommendation")
        }
    )
    try:
        services.review_save(
            actor=user,
            course=course,
            assignment_id=_int(request.POST.get("assignment")) or 0,
            version=_int(request.POST.get("version")) or 0,
            data=data,
            submit=request.POST.get("action") == "submit",
        )
        messages.success(
            request,
            "Review submitted; you can still edit it until the due date."
            if request.POST.get("action") == "submit"
            else "Draft saved.",
        )
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("peerreview:page", code=course.code)


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


def _staff_post(request: AuthedRequest, course: Course) -> HttpResponseBase:
    user: User = request.user
    action = request.POST.get("action", "")
    rid = _int(request.POST.get("round")) or 0
    try:
        if action == "create":
            text = request.POST.get("due_at", "").strip()
            try:
                due = local_to_utc(dt.datetime.fromisoformat(text), course.tz)
            except ValueError:
                raise DomainError("Give the review due date as a date and time.") from None
            r = services.round_create(
                actor=user,
                course=course,
                milestone_id=_int(request.POST.get("milestone")) or 0,
                due_at=due,
                k=_int(request.POST.get("k")) or 1,
                show_reviewers=request.POST.get("show_reviewers") == "on",
                title=request.POST.get("title", "").strip(),
            )
            rid = r.pk
            messages.success(
                request, "Round created. Add pairs to avoid, then preview the pairing."
            )
        elif action in ("preview", "reroll"):
            r = services.round_get(course, rid)
            result = services.preview(
                actor=user,
                course=course,
                round_id=rid,
                seed=r.seed + 1 if action == "reroll" else _int(request.POST.get("seed")),
            )
            if result.ok:
                messages.success(
                    request,
                    f"Pairing for seed {services.round_get(course, rid).seed} ({result.method})"
                    + (
                        f"; {result.soft_violations} pair(s) shared a sharing window: unavoidable."
                        if result.soft_violations
                        else "."
                    ),
                )
            else:
                messages.error(request, "No pairing exists: " + "; ".join(result.reasons))
        elif action == "avoid":
            services.avoid_add(
                actor=user,
                course=course,
                round_id=rid,
                group_a=_int(request.POST.get("group_a")) or 0,
                group_b=_int(request.POST.get("group_b")) or 0,
                reason=request.POST.get("reason", ""),
            )
            messages.success(request, "Pair added to avoid; preview again.")
        elif action == "exclude":
            changed = services.exclude(
                actor=user,
                course=course,
                round_id=rid,
                group_id=_int(request.POST.get("group")) or 0,
                reason=request.POST.get("reason", ""),
            )
            messages.success(
                request,
                f"Group left out; {changed} pair(s) changed." if changed else "Group left out.",
            )
        elif action == "swap":
            services.proposal_swap(
                actor=user,
                course=course,
                round_id=rid,
                reviewer_a=_int(request.POST.get("a")) or 0,
                reviewer_b=_int(request.POST.get("b")) or 0,
            )
            messages.success(request, "Swapped; every rule still holds.")
        elif action == "publish":
            if request.POST.get("confirm") != "yes":
                raise DomainError(
                    "Tick the box to confirm: every group is e-mailed whom it reviews."
                )
            n = services.publish(actor=user, course=course, round_id=rid)
            messages.success(
                request, f"Published {n} review assignments; groups are being e-mailed."
            )
        else:
            messages.error(request, "Unknown action.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect(f"/c/{course.code}/peer-review/?round={rid}")


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
        ]
        for rv in rows.iterator(chunk_size=500)
    )
    return csv_response(f"{course.code}-peer-reviews.csv", itertools.chain([header], body))
