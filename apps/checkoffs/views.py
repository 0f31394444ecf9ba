"""Checkoff pages. Students: the course's sign-ups, a week of slots as a picture with free places,
book / move / cancel after a confirmation, their group's booking, outcome and notes. Staff: sets
(create, publish), slots (one, or a day cut into slots: previewed, then created), delete with
confirmation, groups that have not booked (one click e-mails them); the day's schedule per room or
staff member with attendance and outcome; the outcomes board; CSV of both."""

from __future__ import annotations

import datetime as dt
import itertools
import zoneinfo
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.calendar.models import Assignment, CourseEvent, Milestone
from apps.calendar.views import local_to_utc
from apps.checkoffs import charts, rules, selectors, services
from apps.checkoffs.models import HOLDS, HOLDS_FROM_SET, Booking, CheckoffSet, CheckoffSlot
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.timefmt import format_clock, format_instant
from apps.core.views_helpers import course_action, course_for, errors_as_messages
from apps.core.views_helpers import int_or_none as _int
from apps.groups.models import Group
from apps.groups.selectors import group_for_student

PAGE = 50
PLAN_FIELDS = (
    "day",
    "start",
    "end",
    "minutes",
    "location",
    "capacity",
    "staff",
    "break_start",
    "break_end",
)


def _local(value: dt.datetime, course: Course) -> dt.datetime:
    return value.astimezone(course.tz)


def _minutes(value: dt.datetime, course: Course) -> int:
    local = _local(value, course)
    return local.hour * 60 + local.minute


def _date(text: str | None) -> dt.date | None:
    """A date from the query string; None when empty, malformed or implausible (year 2000–2100)."""
    try:
        day = dt.date.fromisoformat(text or "")
    except ValueError:
        return None
    return day if rules.plausible(day) else None


def _time(text: str | None, field: str, *, required: bool = True) -> dt.time | None:
    text = (text or "").strip()
    if not text and not required:
        return None
    try:
        return dt.time.fromisoformat(text)
    except ValueError:
        raise DomainError(f"Give the {field} as a time of day, e.g. 14:00.", field=field) from None


def _week_start(
    course: Course, s: CheckoffSet | None, asked: str | None, now: dt.datetime
) -> dt.date:
    """Monday of the week asked for; else the week of the next slot still open; else of the
    first slot; else this week."""
    day = _date(asked)
    if day is None and s is not None:
        nxt = (
            s.slots.filter(starts_at__gte=now).order_by("starts_at").first()
            or s.slots.order_by("starts_at").first()
        )
        day = _local(nxt.starts_at, course).date() if nxt else None
    day = day or _local(now, course).date()
    return day - dt.timedelta(days=day.weekday())


def _week_bounds(course: Course, monday: dt.date) -> tuple[dt.datetime, dt.datetime]:
    zone: zoneinfo.ZoneInfo = course.tz
    start = dt.datetime.combine(monday, dt.time(0), tzinfo=zone)
    return start, dt.datetime.combine(monday + dt.timedelta(days=7), dt.time(0), tzinfo=zone)


def _slot_days(
    course: Course, slots: list[CheckoffSlot]
) -> list[tuple[dt.date, list[CheckoffSlot]]]:
    return [
        (day, list(group))
        for day, group in itertools.groupby(slots, key=lambda x: _local(x.starts_at, course).date())
    ]


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Students: sign-ups and their booking; staff: sets, slots and who has not booked. Every
    change posts to its own action view below."""
    course = course_for(request, code)
    staff = is_staff(request.user, course)
    return _staff(request, course) if staff else _student(request, course)


# ------------------------------------------------------------------ students


def _student(request: AuthedRequest, course: Course) -> HttpResponse:
    user: User = request.user
    now = timezone.now()
    group = group_for_student(course=course, user=user)
    sets = list(selectors.set_list(user=user, course=course))
    mine = (
        {
            b.set_id: b
            for b in Booking.objects.filter(HOLDS, set__in=sets, group=group).select_related(
                "slot", "slot__staff"
            )
        }
        if group
        else {}
    )
    chosen = next((s for s in sets if s.pk == _int(request.GET.get("set"))), None) or next(
        (s for s in sets if s.pk not in mine), sets[0] if sets else None
    )
    hours = course.checkoff_cutoff_hours
    ctx: dict[str, Any] = {
        "course": course,
        "group": group,
        "now": now,
        "cutoff_hours": hours,
        "sets": [(s, mine.get(s.pk)) for s in sets],
        "chosen": chosen,
    }
    if chosen is not None:
        monday = _week_start(course, chosen, request.GET.get("week"), now)
        lo, hi = _week_bounds(course, monday)
        slots = list(
            selectors.slot_list(user=user, course=course).filter(
                set=chosen, starts_at__gte=lo, starts_at__lt=hi
            )
        )
        held = mine.get(chosen.pk)
        days = sorted({_local(x.starts_at, course).date() for x in slots})
        base = {"set": chosen.pk, "week": monday.isoformat()}

        def state(x: CheckoffSlot) -> str:
            if held and held.slot_id == x.pk:
                return "mine"
            if not rules.is_open(x.starts_at, hours, now):
                return "closed"
            return "free" if x.free else "full"

        boxes = [
            charts.Box(
                days.index(_local(x.starts_at, course).date()),
                _minutes(x.starts_at, course),
                _minutes(x.ends_at, course),
                f"{format_clock(x.starts_at, course.timezone)} · "
                + {"mine": "yours", "full": "full", "closed": "closed"}.get(
                    state(x), f"{x.free} free"
                ),
                state(x),
                f"{format_instant(x.starts_at, course.timezone)}, {x.location}: {x.free} of "
                f"{x.capacity} free",
                "?" + urlencode({**base, "confirm": x.pk}) + "#confirm",
            )
            for x in slots
        ]
        asked = _int(request.GET.get("confirm")) or 0
        confirm = next((x for x in slots if x.pk == asked), None)
        if confirm is None and asked:
            confirm = (
                selectors.slot_list(user=user, course=course).filter(set=chosen, pk=asked).first()
            )
        ctx.update(
            held=held,
            monday=monday,
            prev_week=(monday - dt.timedelta(days=7)).isoformat(),
            next_week=(monday + dt.timedelta(days=7)).isoformat(),
            base=urlencode(base),
            grid=mark_safe(
                charts.grid_svg(
                    [f"{d:%a %b} {d.day}" for d in days],
                    boxes,
                    title=f"{chosen.title}: slots the week of {monday:%b} {monday.day}",
                    legend=["free", "full", "mine", "closed"],
                )
            ),
            days=[(d, [(x, state(x)) for x in xs]) for d, xs in _slot_days(course, slots)],
            confirm=confirm,
            confirm_state=state(confirm) if confirm else "",
            held_open=bool(held and rules.is_open(held.slot.starts_at, hours, now)),
            held_cutoff=rules.cutoff_at(held.slot.starts_at, hours) if held else None,
            history=list(
                Booking.objects.filter(set=chosen, group=group)
                .exclude(HOLDS)
                .select_related("slot")
                .order_by("-created_at")[:10]
            )
            if group
            else [],
        )
    return render(request, "checkoffs/student.html", ctx)


def _back_to_student_page(request: AuthedRequest, course: Course) -> HttpResponseBase:
    keep = {k: request.POST.get(k, "") for k in ("set", "week") if request.POST.get(k)}
    return redirect(f"/c/{course.code}/checkoffs/?{urlencode(keep)}")


def _confirmed(request: AuthedRequest) -> bool:
    if request.POST.get("confirm") == "yes":
        return True
    messages.error(request, "Confirm the change first.")
    return False


def _book(request: AuthedRequest, course: Course, slot_id: int, *, move: bool) -> HttpResponseBase:
    if _confirmed(request):
        with errors_as_messages(request):
            b = services.book(actor=request.user, course=course, slot_id=slot_id, move=move)
            when = format_instant(b.slot.starts_at, course.timezone)
            messages.success(
                request,
                f"{'Moved' if move else 'Booked'}: {b.set.title}, {when}, {b.slot.location}. "
                "Your group is e-mailed a confirmation with a calendar file.",
            )
    return _back_to_student_page(request, course)


@course_action(student=True)
def slot_book(request: AuthedRequest, course: Course, slot_id: int) -> HttpResponseBase:
    """A student books a slot for the whole group, after confirming."""
    return _book(request, course, slot_id, move=False)


@course_action(student=True)
def slot_move(request: AuthedRequest, course: Course, slot_id: int) -> HttpResponseBase:
    """A student moves the group's booking in the same sign-up to this slot, after confirming."""
    return _book(request, course, slot_id, move=True)


@course_action(student=True)
def slot_cancel(request: AuthedRequest, course: Course, slot_id: int) -> HttpResponseBase:
    """A student cancels the group's booking of this slot, after confirming."""
    if _confirmed(request):
        with errors_as_messages(request):
            b = services.cancel(actor=request.user, course=course, slot_id=slot_id)
            messages.success(request, f"Cancelled your group's {b.set.title} booking.")
    return _back_to_student_page(request, course)


# ------------------------------------------------------------------ staff


def _staff(request: AuthedRequest, course: Course) -> HttpResponse:
    user: User = request.user
    now = timezone.now()
    live_groups = (
        Group.objects.filter(
            course=course, dissolved_at__isnull=True, memberships__left_at__isnull=True
        )
        .distinct()
        .count()
    )
    sets = list(
        selectors.set_list(user=user, course=course).annotate(
            n_slots=Count("slots", distinct=True),
            n_booked=Count("bookings", filter=HOLDS_FROM_SET, distinct=True),
        )
    )
    chosen = next(
        (s for s in sets if s.pk == _int(request.GET.get("set"))), sets[-1] if sets else None
    )
    ctx: dict[str, Any] = {
        "course": course,
        "sets": sets,
        "chosen": chosen,
        "live_groups": live_groups,
        "now": now,
        "kinds": CheckoffSet.Kind.choices,
        "assignments": Assignment.objects.filter(course=course).order_by("due_at"),
        "sessions": CourseEvent.objects.filter(
            course=course, kind__in=["session", "meeting"]
        ).order_by("starts_at"),
        "milestones": Milestone.objects.filter(course=course).order_by("due_at"),
        "staff_members": services.staff_members(course),
        "get": request.GET,
    }
    if chosen is not None:
        monday = _week_start(course, chosen, request.GET.get("week"), now)
        lo, hi = _week_bounds(course, monday)
        week = list(
            CheckoffSlot.objects.filter(
                set=chosen, starts_at__gte=lo, starts_at__lt=hi
            ).select_related("staff")
        )
        days = sorted({_local(x.starts_at, course).date() for x in week})
        base = {"set": chosen.pk}
        boxes = [
            charts.Box(
                days.index(_local(x.starts_at, course).date()),
                _minutes(x.starts_at, course),
                _minutes(x.ends_at, course),
                f"{format_clock(x.starts_at, course.timezone)} · {x.booked}/{x.capacity}",
                "full" if not x.free else ("booked" if x.booked else "free"),
                f"{format_instant(x.starts_at, course.timezone)}, {x.location}: {x.booked} of "
                f"{x.capacity} booked" + (f", {x.staff.get_full_name()}" if x.staff else ""),
                f"?{urlencode({**base, 'slots_from': x.starts_at.date().isoformat()})}#slots",
            )
            for x in week
        ]
        slots_qs = (
            CheckoffSlot.objects.filter(set=chosen)
            .select_related("staff")
            .order_by("starts_at", "location", "pk")
        )
        frm = _date(request.GET.get("slots_from"))
        if frm:
            slots_qs = slots_qs.filter(
                starts_at__gte=dt.datetime.combine(frm, dt.time(0), tzinfo=course.tz)
            )
        slots_page = Paginator(slots_qs, PAGE).get_page(request.GET.get("page"))
        held: dict[int, list[str]] = {}
        for b in Booking.objects.filter(
            slot__in=list(slots_page), cancelled_at__isnull=True
        ).select_related("group"):
            held.setdefault(b.slot_id, []).append(
                b.group.name + (f" ({b.get_outcome_display().lower()})" if b.outcome else "")
            )
        unbooked = selectors.unbooked_groups(chosen)
        ctx.update(
            monday=monday,
            prev_week=(monday - dt.timedelta(days=7)).isoformat(),
            next_week=(monday + dt.timedelta(days=7)).isoformat(),
            grid=mark_safe(
                charts.grid_svg(
                    [f"{d:%a %b} {d.day}" for d in days],
                    boxes,
                    title=f"{chosen.title}: the week of {monday:%b} {monday.day}",
                    legend=["free", "booked", "full"],
                )
            ),
            slots_page=slots_page,
            slot_rows=[(x, held.get(x.pk, [])) for x in slots_page],
            unbooked_page=Paginator(unbooked, PAGE).get_page(request.GET.get("upage")),
            unbooked_total=unbooked.count(),
            book_by_passed=bool(chosen.book_by and chosen.book_by < now),
            delete=CheckoffSlot.objects.filter(
                set=chosen, pk=_int(request.GET.get("delete")) or 0
            ).first(),
            plan=_plan_from(request, course) if request.GET.get("plan") else None,
            default_location=course.location,
        )
        if ctx["delete"] is not None:
            ctx["delete_groups"] = [
                b.group.name
                for b in ctx["delete"]
                .bookings.filter(cancelled_at__isnull=True)
                .select_related("group")
            ]
    return render(request, "checkoffs/staff.html", ctx)


def _plan_args(data: Any, course: Course) -> dict[str, Any]:
    day = _date(data.get("day"))
    if day is None:
        raise DomainError(
            f"Give the day as a date between {rules.FIRST_YEAR} and {rules.LAST_YEAR}.", field="day"
        )
    return {
        "course": course,
        "day": day,
        "start": _time(data.get("start"), "start"),
        "end": _time(data.get("end"), "end"),
        "minutes": _int(data.get("minutes")) or 0,
        "location": data.get("location", ""),
        "capacity": _int(data.get("capacity")) or 1,
        "staff_id": _int(data.get("staff")),
        "break_start": _time(data.get("break_start"), "break start", required=False),
        "break_end": _time(data.get("break_end"), "break end", required=False),
    }


def _plan_from(request: AuthedRequest, course: Course) -> dict[str, Any]:
    """The bulk form's preview: the slots it would make, each with its clash; or the problem."""
    try:
        plans = services.slots_plan(**_plan_args(request.GET, course))
    except DomainError as exc:
        return {"error": exc.message}
    return {
        "plans": plans,
        "ok": not any(p.clash for p in plans),
        "hidden": [(k, request.GET.get(k, "")) for k in PLAN_FIELDS],
    }


def _to_set(course: Course, set_id: int, anchor: str = "") -> HttpResponseBase:
    return redirect(f"/c/{course.code}/checkoffs/?set={set_id}{anchor}")


def _local_input(text: str, course: Course) -> dt.datetime:
    """A `datetime-local` field's value, read in course time; ValueError when malformed."""
    try:
        return local_to_utc(dt.datetime.fromisoformat(text), course.tz)
    except OverflowError:
        raise ValueError(text) from None


@course_action(staff=True)
def set_create(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff create a sign-up (unpublished) for an assignment, session or milestone."""
    set_id = 0
    with errors_as_messages(request):
        book_by = request.POST.get("book_by", "").strip()
        try:
            when = _local_input(book_by, course) if book_by else None
        except ValueError:
            raise DomainError("Give “book by” as a date and time, or leave it empty.") from None
        s = services.set_create(
            actor=request.user,
            course=course,
            kind=request.POST.get("kind", ""),
            title=request.POST.get("title", ""),
            assignment_id=_int(request.POST.get("assignment")),
            event_id=_int(request.POST.get("event")),
            milestone_id=_int(request.POST.get("milestone")),
            book_by=when,
        )
        set_id = s.pk
        messages.success(request, f"“{s.title}” created. Add slots, then publish it.")
    return _to_set(course, set_id)


def _publish(
    request: AuthedRequest, course: Course, set_id: int, *, published: bool
) -> HttpResponseBase:
    with errors_as_messages(request):
        s = services.set_publish(
            actor=request.user, course=course, set_id=set_id, published=published
        )
        state = "published: students can book" if s.published_at else "hidden from students"
        messages.success(request, f"“{s.title}” is {state}.")
    return _to_set(course, set_id)


@course_action(staff=True)
def set_publish(request: AuthedRequest, course: Course, set_id: int) -> HttpResponseBase:
    """Staff open a sign-up to students."""
    return _publish(request, course, set_id, published=True)


@course_action(staff=True)
def set_unpublish(request: AuthedRequest, course: Course, set_id: int) -> HttpResponseBase:
    """Staff hide a sign-up from students again (bookings stay)."""
    return _publish(request, course, set_id, published=False)


@course_action(staff=True)
def slots_create(request: AuthedRequest, course: Course, set_id: int) -> HttpResponseBase:
    """Staff create the previewed day of slots, all or none."""
    with errors_as_messages(request):
        plans = services.slots_plan(**_plan_args(request.POST, course))
        made = services.slots_create(actor=request.user, course=course, set_id=set_id, plans=plans)
        messages.success(request, f"{len(made)} slots created.")
    return _to_set(course, set_id, "#slots")


@course_action(staff=True)
def slot_create(request: AuthedRequest, course: Course, set_id: int) -> HttpResponseBase:
    """Staff add one slot at a course-time start, refused when it clashes."""
    with errors_as_messages(request):
        try:
            start = _local_input(request.POST.get("starts_at", ""), course)
        except ValueError:
            raise DomainError(
                "Give the slot's start as a date and time.", field="starts_at"
            ) from None
        minutes = _int(request.POST.get("minutes")) or 0
        if not 5 <= minutes <= 480:
            raise DomainError("A slot lasts between 5 and 480 minutes.", field="minutes")
        plans = services.single_plan(
            course=course,
            starts_at=start,
            ends_at=start + dt.timedelta(minutes=minutes),
            location=request.POST.get("location", ""),
            capacity=_int(request.POST.get("capacity")) or 1,
            staff_id=_int(request.POST.get("staff")),
        )
        if plans[0].clash:
            raise DomainError(f"Not created: {plans[0].clash}.")
        services.slots_create(actor=request.user, course=course, set_id=set_id, plans=plans)
        messages.success(request, f"Slot created: {format_instant(start, course.timezone)}.")
    return _to_set(course, set_id, "#slots")


@course_action(staff=True)
def slot_delete(request: AuthedRequest, course: Course, slot_id: int) -> HttpResponseBase:
    """Staff delete a slot after confirming; its groups are e-mailed to book again."""
    set_id = _int(request.POST.get("set")) or 0
    with errors_as_messages(request):
        n = services.slot_delete(
            actor=request.user,
            course=course,
            slot_id=slot_id,
            confirm=request.POST.get("confirm") == "yes",
        )
        messages.success(
            request,
            f"Slot deleted; {n} group(s) e-mailed to book again." if n else "Slot deleted.",
        )
    return _to_set(course, set_id, "#slots")


@course_action(staff=True)
def set_remind(request: AuthedRequest, course: Course, set_id: int) -> HttpResponseBase:
    """Staff e-mail every group without a booking in the sign-up."""
    with errors_as_messages(request):
        n = services.remind(actor=request.user, course=course, set_id=set_id)
        messages.success(
            request, f"Reminder e-mails queued for the {n} group(s) without a booking."
        )
    return _to_set(course, set_id, "#unbooked")


# ------------------------------------------------------------------ the day's schedule


@login_required
def schedule(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    user: User = request.user
    if request.method == "POST" and not _int(request.POST.get("booking")):
        messages.error(request, "Record an outcome from a booking's form.")
        return redirect(f"/c/{course.code}/checkoffs/schedule/")
    if request.method == "POST":
        try:
            b = services.record(
                actor=user,
                course=course,
                booking_id=_int(request.POST.get("booking")) or 0,
                attendance=request.POST.get("attendance", ""),
                outcome=request.POST.get("outcome", ""),
                notes=request.POST.get("notes", ""),
            )
            messages.success(
                request,
                f"{b.group.name}: {b.get_attendance_display().lower()}"
                + (f", {b.get_outcome_display().lower()}" if b.outcome else "")
                + (" — the group is e-mailed and can book again." if b.outcome == "redo" else "."),
            )
        except DomainError as exc:
            messages.error(request, exc.message)
        keep = {k: request.POST.get(k) for k in ("date", "by", "set") if request.POST.get(k)}
        anchor = f"#b{request.POST.get('booking', '')}"
        return redirect(f"/c/{course.code}/checkoffs/schedule/?{urlencode(keep)}{anchor}")
    now = timezone.now()
    day = _date(request.GET.get("date")) or _local(now, course).date()
    by = "staff" if request.GET.get("by") == "staff" else "room"
    lo = dt.datetime.combine(day, dt.time(0), tzinfo=course.tz)
    found = selectors.slot_list(user=user, course=course).filter(
        starts_at__gte=lo, starts_at__lt=lo + dt.timedelta(days=1)
    )
    set_id = _int(request.GET.get("set"))
    if set_id:
        found = found.filter(set_id=set_id)
    if request.GET.get("mine"):
        found = found.filter(staff=user)
    slots = list(found)
    bookings: dict[int, list[Booking]] = {}
    for b in Booking.objects.filter(slot__in=slots, cancelled_at__isnull=True).select_related(
        "group", "recorded_by"
    ):
        bookings.setdefault(b.slot_id, []).append(b)
    if request.GET.get("format") == "csv":
        rows = (
            [
                x.set.title,
                format_instant(x.starts_at, course.timezone),
                x.location,
                x.staff.get_full_name() if x.staff else "",
                b.group.name,
                b.attendance,
                b.outcome,
                b.notes,
            ]
            for x in slots
            for b in bookings.get(x.pk, [])
        )
        return csv_response(
            f"{course.code}-checkoffs-{day}.csv",
            itertools.chain(
                [["set", "starts", "place", "staff", "group", "attendance", "outcome", "notes"]],
                rows,
            ),
        )

    def column(x: CheckoffSlot) -> str:
        return (
            (x.staff.get_full_name() if x.staff else "Unassigned") if by == "staff" else x.location
        )

    columns = sorted({column(x) for x in slots})

    def state(x: CheckoffSlot) -> str:
        bs = bookings.get(x.pk, [])
        if not bs:
            return "free"
        worst = {b.outcome or b.attendance or "booked" for b in bs}
        return next(
            (k for k in ("no-show", "redo", "booked", "present", "passed") if k in worst), "booked"
        ).replace("present", "booked")

    boxes = [
        charts.Box(
            columns.index(column(x)),
            _minutes(x.starts_at, course),
            _minutes(x.ends_at, course),
            f"{format_clock(x.starts_at, course.timezone)} · "
            + (", ".join(b.group.name for b in bookings.get(x.pk, [])) or "free"),
            state(x),
            f"{format_instant(x.starts_at, course.timezone)}, {x.location}, {x.set.title}: "
            + (", ".join(b.group.name for b in bookings.get(x.pk, [])) or "not booked"),
            f"#s{x.pk}",
        )
        for x in slots
    ]
    groups_by_column = [
        (c, [(x, bookings.get(x.pk, [])) for x in slots if column(x) == c]) for c in columns
    ]
    ctx = {
        "course": course,
        "day": day,
        "by": by,
        "grid": mark_safe(
            charts.grid_svg(
                columns,
                boxes,
                title=f"Checkoffs on {day:%a %b} {day.day}",
                legend=["free", "booked", "passed", "redo", "no-show"],
            )
        ),
        "columns": groups_by_column,
        "prev": (day - dt.timedelta(days=1)).isoformat(),
        "next": (day + dt.timedelta(days=1)).isoformat(),
        "sets": selectors.set_list(user=user, course=course),
        "set_id": set_id,
        "mine": bool(request.GET.get("mine")),
        "attendance": Booking.Attendance.choices,
        "outcomes": Booking.Outcome.choices,
        "total": sum(len(v) for v in bookings.values()),
    }
    return render(request, "checkoffs/schedule.html", ctx)


# ------------------------------------------------------------------ outcomes


@login_required
def outcomes(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Groups × sets, each cell the group's latest booking in the set.

    A cell shows the booking's time, attendance and outcome.
    """
    course = course_for(request, code, staff=True)
    user: User = request.user
    sets = list(selectors.set_list(user=user, course=course))
    q = request.GET.get("q", "").strip()
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    if q:
        groups = groups.filter(
            Q(name__icontains=q)
            | Q(memberships__user__full_name__icontains=q, memberships__left_at__isnull=True)
        ).distinct()
    status = request.GET.get("status", "")
    set_id = _int(request.GET.get("set"))
    if status and set_id:
        in_set = Booking.objects.filter(set_id=set_id, cancelled_at__isnull=True)
        if status == "unbooked":
            groups = groups.exclude(pk__in=in_set.filter(HOLDS).values("group_id"))
        elif status in ("passed", "redo"):
            groups = groups.filter(pk__in=in_set.filter(outcome=status).values("group_id"))
        elif status == "no-show":
            groups = groups.filter(pk__in=in_set.filter(attendance="no-show").values("group_id"))
    bookings = (
        Booking.objects.filter(set__course=course, cancelled_at__isnull=True)
        .select_related("slot", "set", "group")
        .order_by("created_at")
    )
    if request.GET.get("format") == "csv":
        ids = groups.values("pk")
        lines = (
            [
                b.group.name,
                b.set.title,
                format_instant(b.slot.starts_at, course.timezone),
                b.slot.location,
                b.attendance,
                b.outcome,
                b.notes,
                format_instant(b.recorded_at, course.timezone) if b.recorded_at else "",
            ]
            for b in bookings.filter(group_id__in=ids)
            .order_by("group__name", "set_id", "created_at")
            .iterator(chunk_size=500)
        )
        return csv_response(
            f"{course.code}-checkoff-outcomes.csv",
            itertools.chain(
                [
                    [
                        "group",
                        "set",
                        "starts",
                        "place",
                        "attendance",
                        "outcome",
                        "notes",
                        "recorded_at",
                    ]
                ],
                lines,
            ),
        )
    page_ = Paginator(groups, PAGE).get_page(request.GET.get("page"))
    latest: dict[tuple[int, int], Booking] = {}
    for b in bookings.filter(group__in=list(page_)):
        latest[(b.group_id, b.set_id)] = b  # ordered by creation: the last one wins
    rows = [(g, [(s, latest.get((g.pk, s.pk))) for s in sets]) for g in page_]
    counts = Booking.objects.filter(HOLDS, set__in=sets).values("set_id").annotate(n=Count("id"))
    passed = (
        Booking.objects.filter(set__in=sets, outcome="passed", cancelled_at__isnull=True)
        .values("set_id")
        .annotate(n=Count("id"))
    )
    n_booked, n_passed = (
        {c["set_id"]: c["n"] for c in counts},
        {c["set_id"]: c["n"] for c in passed},
    )
    summary = [(s, n_booked.get(s.pk, 0), n_passed.get(s.pk, 0)) for s in sets]
    return render(
        request,
        "checkoffs/outcomes.html",
        {
            "course": course,
            "sets": sets,
            "rows": rows,
            "page": page_,
            "q": q,
            "status": status,
            "set_id": set_id,
            "summary": summary,
            "total": page_.paginator.count,
        },
    )
