"""Scribing pages. Students: preferences until the deadline, then their lectures (submit notes
with the sources declaration, propose and answer swaps) and who scribes what. Staff: policy,
eligible lectures, solve (score, optimality or the reason it is impossible), adjust, publish,
then the board (loads and satisfied-preference charts, per-lecture scribes, the review queue,
late notes, swaps) and a CSV of every duty."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.calendar.models import Lecture
from apps.calendar.views import local_to_utc
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages, typed_int
from apps.core.views_helpers import int_or_none as _int
from apps.groups.selectors import current_group_id
from apps.scribing import charts, services
from apps.scribing.models import ScribeDuty, ScribeGroupMode, ScribePreference, ScribeSwap

PAGE = 50


def _back(course: Course) -> HttpResponseBase:
    return redirect("scribing:page", code=course.code)


def late(d: ScribeDuty, now: dt.datetime) -> bool:
    return d.late_at(now)


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Students: preferences, then their lectures; staff: the plan and the board (CSV with
    ?format=csv). Every change posts to its own action view below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        if request.GET.get("format") == "csv":
            return _csv(course)
        return _board(request, course)
    return _mine(request, course)


# ------------------------------------------------------------------ students


def _mine(request: AuthedRequest, course: Course) -> HttpResponse:
    plan = services.plan_for(course)
    now = timezone.now()
    lectures = services.eligible_lectures(course)
    prefs = {
        p.lecture_id: p
        for p in ScribePreference.objects.filter(course=course, student=request.user)
    }
    duties = list(
        ScribeDuty.objects.filter(course=course, student=request.user).select_related("lecture")
    )
    swaps = list(
        ScribeSwap.objects.filter(course=course, status=ScribeSwap.Status.OPEN)
        .filter(other=request.user)
        .select_related("proposer", "duty__lecture", "other_duty__lecture")
    ) + list(
        ScribeSwap.objects.filter(
            course=course, status=ScribeSwap.Status.OPEN, proposer=request.user
        ).select_related("other", "duty__lecture", "other_duty__lecture")
    )
    group_id = current_group_id(course=course, user=request.user)
    mode = (
        ScribeGroupMode.objects.filter(group_id=group_id).values_list("mode", flat=True).first()
        if group_id is not None
        else None
    )
    # Preferences are asked for lectures still to come: one already held cannot be scribed.
    rows = [
        {"lecture": lec, "pref": prefs.get(lec.pk)}
        for lec, _ in services.upcoming_lectures(course, now)
    ]
    # Who scribes what, once published: names for the student's own lectures and the one asked
    # for (?lecture=N), counts for the rest, so the page stays small in a course of 2,000.
    who: dict[int, list[str]] = defaultdict(list)
    counts: Counter[int] = Counter()
    if plan.published_at:
        asked = _int(request.GET.get("lecture"))
        shown = {d.lecture_id for d in duties} | {
            lec.pk for lec, _ in lectures if lec.number == asked
        }
        counts = Counter(services.duty_counts(course))
        for lid, name, email in ScribeDuty.objects.filter(
            course=course, lecture_id__in=shown
        ).values_list("lecture_id", "student__full_name", "student__email"):
            who[lid].append(name or email)
    open_prefs = not plan.published_at and not (
        plan.preferences_due_at and now > plan.preferences_due_at
    )
    return render(
        request,
        "scribing/mine.html",
        {
            "course": course,
            "plan": plan,
            "rows": rows,
            "duties": [(d, late(d, now)) for d in duties],
            "swaps": swaps,
            "open_prefs": open_prefs,
            "ranks": range(1, plan.max_preferences + 1),
            "mode": mode or "",
            "in_group": group_id is not None,
            "who": [(lec, who.get(lec.pk, []), counts.get(lec.pk, 0)) for lec, _ in lectures]
            if plan.published_at
            else [],
        },
    )


def _ranked_choices(post: Any) -> tuple[list[int], list[int]]:
    """The preference form's `lec-<id>` fields: lectures marked "cannot", and the preferred ones
    in the order of their choice numbers."""
    cannot: list[int] = []
    ranked: dict[int, list[int]] = {}
    for key in post:
        value = post.get(key, "")
        lecture_id = _int(key[4:]) if key.startswith("lec-") and value else None
        if lecture_id is None:
            continue
        if value == "cannot":
            cannot.append(lecture_id)
        elif value.isdigit():
            ranked.setdefault(int(value), []).append(lecture_id)
    if any(len(v) > 1 for v in ranked.values()):
        raise DomainError("Give each choice number to one lecture only.")
    return cannot, [ranked[r][0] for r in sorted(ranked)]


@course_action(student=True)
def preferences_save(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A student saves the lectures they cannot take and the ones they prefer, in order."""
    with errors_as_messages(request):
        cannot, prefer = _ranked_choices(request.POST)
        services.preferences_save(
            student=request.user,
            course=course,
            cannot=cannot,
            prefer=prefer,
            group_mode=request.POST.get("group_mode", ""),
        )
        messages.success(request, "Preferences saved. You can change them until the deadline.")
    return _back(course)


@course_action(student=True)
def duty_submit(request: AuthedRequest, course: Course, duty_id: int) -> HttpResponseBase:
    """A student submits the notes' link with the sources declaration."""
    with errors_as_messages(request):
        services.duty_submit(
            student=request.user,
            course=course,
            duty_id=duty_id,
            link=request.POST.get("link", "").strip(),
            declaration=request.POST.get("declaration", ""),
        )
        messages.success(request, "Notes submitted. Staff will review them.")
    return _back(course)


@course_action(student=True)
def swap_propose(request: AuthedRequest, course: Course, duty_id: int) -> HttpResponseBase:
    """A student offers one of their lectures to a classmate (for one of theirs, or for none)."""
    with errors_as_messages(request):
        other = request.POST.get("other", "")
        services.swap_propose(
            proposer=request.user,
            course=course,
            duty_id=duty_id,
            other_email=other,
            other_duty_id=_other_duty(course, other, request.POST.get("their_lecture")),
            note=request.POST.get("note", ""),
        )
        messages.success(request, "Swap proposed; your classmate sees it on their scribing page.")
    return _back(course)


def _swap_decide(
    request: AuthedRequest, course: Course, swap_id: int, *, accept: bool, done: str
) -> HttpResponseBase:
    with errors_as_messages(request):
        services.swap_decide(actor=request.user, course=course, swap_id=swap_id, accept=accept)
        messages.success(request, done)
    return _back(course)


@course_action(student=True)
def swap_accept(request: AuthedRequest, course: Course, swap_id: int) -> HttpResponseBase:
    """The classmate asked accepts: the lectures change hands if every rule still holds."""
    done = "Swap accepted: the lectures changed hands."
    return _swap_decide(request, course, swap_id, accept=True, done=done)


@course_action(student=True)
def swap_decline(request: AuthedRequest, course: Course, swap_id: int) -> HttpResponseBase:
    """The classmate asked declines the swap."""
    return _swap_decide(request, course, swap_id, accept=False, done="Swap declined.")


@course_action(student=True)
def swap_cancel(request: AuthedRequest, course: Course, swap_id: int) -> HttpResponseBase:
    """The proposer withdraws the swap."""
    return _swap_decide(request, course, swap_id, accept=False, done="Swap cancelled.")


def _other_duty(course: Course, email: str, number: str | None) -> int | None:
    n = _int(number)
    if n is None:
        return None
    duty = ScribeDuty.objects.filter(
        course=course, student__email__iexact=email.strip(), lecture__number=n
    ).first()
    if duty is None:
        raise DomainError(f"{email} does not scribe lecture {n}.")
    return duty.pk


# ------------------------------------------------------------------ staff


def _board(request: AuthedRequest, course: Course) -> HttpResponse:
    plan = services.plan_for(course)
    now = timezone.now()
    lectures = services.eligible_lectures(course)
    all_lectures = list(Lecture.objects.filter(course=course).order_by("starts_at", "number"))
    eligible = {lec.pk: needed for lec, needed in lectures}
    if plan.published_at:
        counts = Counter(services.duty_counts(course))
    else:
        counts = Counter(lid for _, lid in plan.proposal)
    problem = services.problem_for(course) if plan.proposal and not plan.published_at else None
    bounds = services.solver.loads_for(problem) if problem else {}
    load_svg = charts.loads_svg([(f"L{lec.number}", counts.get(lec.pk, 0)) for lec, _ in lectures])
    satisfied = {int(k): v for k, v in (plan.proposal_satisfied or {}).items()}
    wanted = dict(
        ScribePreference.objects.filter(course=course, kind="prefer")
        .values("rank")
        .annotate(n=Count("pk"))
        .values_list("rank", "n")
    )
    ranks_svg = charts.ranks_svg(
        [
            (f"choice {r}", satisfied.get(r, 0), wanted.get(r, 0))
            for r in range(1, plan.max_preferences + 1)
        ]
    )
    lecture_no = _int(request.GET.get("lecture"))
    detail = None
    if lecture_no is not None:
        lec = next((x for x in all_lectures if x.number == lecture_no), None)
        if lec is not None:
            if plan.published_at:
                people: list[tuple[str, ScribeDuty | None]] = [
                    (d.student.full_name or d.student.email, d)
                    for d in ScribeDuty.objects.filter(course=course, lecture=lec).select_related(
                        "student"
                    )
                ]
            else:
                ids = [s for s, lid in plan.proposal if lid == lec.pk]
                people = [
                    (u.full_name or u.email, None)
                    for u in User.objects.filter(pk__in=ids).order_by("full_name")
                ]
            detail = {"lecture": lec, "people": people}
    queue = Paginator(
        ScribeDuty.objects.filter(course=course, status=ScribeDuty.Status.SUBMITTED)
        .select_related("student", "lecture")
        .order_by("submitted_at"),
        PAGE,
    ).get_page(request.GET.get("page"))
    overdue = Paginator(
        ScribeDuty.objects.filter(
            course=course,
            due_at__lt=now,
            status__in=[ScribeDuty.Status.ASSIGNED, ScribeDuty.Status.REVISION],
        )
        .select_related("student", "lecture")
        .order_by("due_at"),
        PAGE,
    ).get_page(request.GET.get("late_page"))
    swaps = Paginator(
        ScribeSwap.objects.filter(course=course).select_related(
            "proposer", "other", "duty__lecture", "other_duty__lecture"
        ),
        20,
    ).get_page(request.GET.get("swaps_page"))
    statuses = dict(
        ScribeDuty.objects.filter(course=course)
        .values("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    return render(
        request,
        "scribing/board.html",
        {
            "course": course,
            "plan": plan,
            "students": services.active_student_count(course),
            "lectures": [
                {
                    "lecture": lec,
                    "eligible": lec.pk in eligible,
                    "needed": eligible.get(lec.pk),
                    "count": counts.get(lec.pk, 0),
                    "bounds": bounds.get(lec.pk),
                }
                for lec in all_lectures
            ],
            "load_svg": mark_safe(load_svg),
            "ranks_svg": mark_safe(ranks_svg),
            "detail": detail,
            "queue": queue,
            "overdue": overdue,
            "swaps": swaps,
            "statuses": sorted(statuses.items()),
            "gap": _gap(plan),
            "due_local": plan.preferences_due_at.astimezone(course.tz).strftime("%Y-%m-%dT%H:%M")
            if plan.preferences_due_at
            else "",
        },
    )


def _gap(plan: Any) -> float:
    if plan.proposal_optimal or not plan.proposal_bound:
        return 0.0
    return max(0.0, (plan.proposal_bound - plan.proposal_score) / plan.proposal_bound)


@course_action(staff=True)
def plan_save(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff save the scribing rules: duties per student, gap, notes due, preference deadline."""
    with errors_as_messages(request):
        due = request.POST.get("preferences_due_at", "").strip()
        services.plan_update(
            actor=request.user,
            course=course,
            per_student=_int(request.POST.get("per_student")),
            min_gap_days=_int(request.POST.get("min_gap_days")),
            notes_due_days=_int(request.POST.get("notes_due_days")),
            max_preferences=_int(request.POST.get("max_preferences")),
            seed=_int(request.POST.get("seed")),
            preferences_due_at=_local(course, due) if due else None,
        )
        messages.success(request, "Scribing rules saved.")
    return _back(course)


@course_action(staff=True)
def lectures_save(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff choose which lectures are scribed and by how many students: every lecture or none
    (one transaction), and a "needed" that is not a whole number is named, not read as empty."""
    with errors_as_messages(request), transaction.atomic():
        for lec in Lecture.objects.filter(course=course).order_by("number"):
            needed = typed_int(
                request.POST.get(f"needed-{lec.pk}"),
                f"Scribes needed for L{lec.number}",
                field="needed",
            )
            services.lecture_set(
                actor=request.user,
                course=course,
                lecture_id=lec.pk,
                eligible=request.POST.get(f"eligible-{lec.pk}") == "on",
                needed=needed,
            )
        messages.success(request, "Eligible lectures saved.")
    return _back(course)


@course_action(staff=True)
def solve(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff solve the assignment (on a worker when large): its score and how good it is, or
    why none exists."""
    with errors_as_messages(request):
        result = services.solve_requested(actor=request.user, course=course)
        if result is None:
            messages.success(
                request, "Solving on a worker; this page shows the result when it is done."
            )
        elif not result.ok:
            reasons = "; ".join(result.reasons[:6])
            messages.error(request, f"No assignment exists: {reasons}.")
        elif result.optimal:
            messages.success(request, f"Solved: preference score {result.score} (proven optimal).")
        else:
            messages.success(
                request,
                f"Solved: preference score {result.score} "
                f"(within {100 * result.gap:.1f} % of the best possible).",
            )
    return _back(course)


@course_action(staff=True)
def proposal_move(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff move one student's proposed duty to another lecture, if every rule still holds."""
    with errors_as_messages(request):
        email = request.POST.get("student", "").strip()
        student = User.objects.filter(email__iexact=email).first()
        lectures = {lec.number: lec.pk for lec in Lecture.objects.filter(course=course)}
        a = lectures.get(_int(request.POST.get("from")) or -1)
        b = lectures.get(_int(request.POST.get("to")) or -1)
        if student is None or a is None or b is None:
            raise DomainError("Give the student's e-mail and two lecture numbers.")
        services.proposal_move(
            actor=request.user, course=course, student_id=student.pk, from_lecture=a, to_lecture=b
        )
        messages.success(request, "Moved; every rule still holds.")
    return _back(course)


@course_action(staff=True)
def publish(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff publish the proposal after confirming: duties are created, students e-mailed."""
    with errors_as_messages(request):
        if request.POST.get("confirm") != "yes":
            raise DomainError("Tick the box to confirm: students are e-mailed their lectures.")
        n = services.publish(actor=request.user, course=course)
        messages.success(request, f"Published: {n} duties created; students are being e-mailed.")
    return _back(course)


def _review(
    request: AuthedRequest, course: Course, duty_id: int, *, accept: bool
) -> HttpResponseBase:
    with errors_as_messages(request):
        services.duty_review(
            actor=request.user,
            course=course,
            duty_id=duty_id,
            accept=accept,
            feedback=request.POST.get("feedback", ""),
        )
        messages.success(request, "Review saved.")
    return _back(course)


@course_action(staff=True)
def duty_accept(request: AuthedRequest, course: Course, duty_id: int) -> HttpResponseBase:
    """Staff accept submitted notes."""
    return _review(request, course, duty_id, accept=True)


@course_action(staff=True)
def duty_revise(request: AuthedRequest, course: Course, duty_id: int) -> HttpResponseBase:
    """Staff send submitted notes back for revision with feedback."""
    return _review(request, course, duty_id, accept=False)


@course_action(staff=True)
def swap_revert(request: AuthedRequest, course: Course, swap_id: int) -> HttpResponseBase:
    """Staff undo an accepted swap."""
    with errors_as_messages(request):
        services.swap_revert(actor=request.user, course=course, swap_id=swap_id)
        messages.success(request, "Swap reverted.")
    return _back(course)


@course_action(staff=True)
def duty_release(request: AuthedRequest, course: Course, duty_id: int) -> HttpResponseBase:
    """Staff release a duty (the student leaves it); solving again fills the gap."""
    with errors_as_messages(request):
        services.release(actor=request.user, course=course, duty_id=duty_id)
        messages.success(request, "Duty released; solve again to fill it.")
    return _back(course)


def _local(course: Course, text: str) -> dt.datetime:
    """A deadline typed in the course's time zone (datetime-local), as aware UTC."""
    try:
        return local_to_utc(dt.datetime.fromisoformat(text), course.tz)
    except ValueError:
        raise DomainError("Give the deadline as a date and time, e.g. 2026-01-20T23:59.") from None


def _csv(course: Course) -> HttpResponseBase:
    rows = (
        ScribeDuty.objects.filter(course=course)
        .select_related("student", "lecture")
        .order_by("lecture__starts_at", "student__full_name")
        .iterator(chunk_size=500)
    )
    now = timezone.now()
    header = [
        "lecture",
        "lecture_date",
        "student",
        "email",
        "due_at",
        "status",
        "late",
        "link",
        "declaration",
        "submitted_at",
    ]
    body = (
        [
            d.lecture.number,
            d.lecture.starts_at.astimezone(course.tz).date().isoformat(),
            d.student.full_name,
            d.student.email,
            d.due_at.isoformat(),
            d.status,
            "yes" if late(d, now) else "",
            d.link,
            d.declaration,
            d.submitted_at.isoformat() if d.submitted_at else "",
        ]
        for d in rows
    )
    return csv_response(f"{course.code}-scribes.csv", itertools.chain([header], body))
