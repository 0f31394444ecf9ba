"""Checkoff writes: sets, slots (single or a day cut into slots, previewed first), bookings
(book, move, cancel until the cut-off, never over capacity), outcomes, and reminders.

Locking: a booking change locks the group's row first (two members of one group queue), then the
slots it touches in id order (groups racing for one slot queue on it). The counts read under
those locks are current; the CHECK on `booked` and the partial unique index on (set, group) are
the database's own guarantee if a code path ever forgets.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from apps.calendar.models import Assignment, CourseEvent, Milestone
from apps.checkoffs import rules
from apps.checkoffs.models import HOLDS, Booking, CheckoffSet, CheckoffSlot
from apps.checkoffs.selectors import unbooked_groups
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import STAFF_ROLES, Course, Membership, User
from apps.core.permissions import is_staff
from apps.core.queue import enqueue_on_commit
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.groups.models import Group
from apps.groups.selectors import group_for_student

REMIND_AGAIN_AFTER = dt.timedelta(minutes=10)


def label(slot: CheckoffSlot, course: Course) -> str:
    return rules.slot_label(slot.starts_at, slot.location, course.timezone)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only course staff can do this.")


def set_get(course: Course, set_id: int) -> CheckoffSet:
    s = CheckoffSet.objects.filter(course=course, pk=set_id).first()
    if s is None:
        raise NotFound("No such sign-up.")
    return s


def staff_members(course: Course) -> list[User]:
    return [
        m.user
        for m in Membership.objects.filter(course=course, role__in=STAFF_ROLES, is_active=True)
        .select_related("user")
        .order_by("user__full_name")
    ]


# ------------------------------------------------------------------ sets


def set_create(
    *,
    actor: User,
    course: Course,
    kind: str,
    title: str = "",
    assignment_id: int | None = None,
    event_id: int | None = None,
    milestone_id: int | None = None,
    book_by: dt.datetime | None = None,
    publish: bool = False,
) -> CheckoffSet:
    _require_staff(actor, course)
    if kind not in CheckoffSet.Kind.values:
        raise DomainError(
            "Choose what the sign-up is for: " + ", ".join(CheckoffSet.Kind.values) + ".",
            field="kind",
        )
    if book_by is not None and not rules.plausible(book_by):
        raise DomainError(
            f"Pick a book-by date between {rules.FIRST_YEAR} and {rules.LAST_YEAR}.",
            field="book_by",
        )
    s = CheckoffSet(course=course, kind=kind, book_by=book_by)
    if kind == CheckoffSet.Kind.ASSIGNMENT:
        s.assignment = Assignment.objects.filter(course=course, pk=assignment_id or 0).first()
        if s.assignment is None:
            raise DomainError("Choose the assignment this checkoff is for.", field="assignment")
        title = title or f"{s.assignment.code} checkoff"
    elif event_id:
        s.event = CourseEvent.objects.filter(course=course, pk=event_id).first()
        if s.event is None:
            raise DomainError("Choose one of the course's sessions.", field="event")
        title = title or s.event.name
    if milestone_id:
        s.milestone = Milestone.objects.filter(course=course, pk=milestone_id).first()
        if s.milestone is None:
            raise DomainError("Choose one of the course's milestones.", field="milestone")
    s.title = (title or CheckoffSet.Kind(kind).label).strip()[:120]
    if publish:
        s.published_at = timezone.now()
    with transaction.atomic():
        s.save()
        audit_record(actor=actor, action="checkoffs.set_create", course=course, obj=s)
    return s


def set_publish(*, actor: User, course: Course, set_id: int, published: bool) -> CheckoffSet:
    _require_staff(actor, course)
    with transaction.atomic():
        s = CheckoffSet.objects.select_for_update().get(pk=set_get(course, set_id).pk)
        if published and not s.slots.exists():
            raise Conflict("Add slots before publishing: students would see an empty sign-up.")
        s.published_at = (s.published_at or timezone.now()) if published else None
        s.save(update_fields=["published_at"])
        audit_record(
            actor=actor,
            action="checkoffs.set_publish",
            course=course,
            obj=s,
            after={"published": published},
        )
    return s


# ------------------------------------------------------------------ slots


@dataclass(frozen=True)
class SlotPlan:
    starts_at: dt.datetime
    ends_at: dt.datetime
    location: str
    capacity: int
    staff: User | None
    clash: str  # why it cannot be created ("" when it can)


def _clashes(
    course: Course, plans: list[tuple[dt.datetime, dt.datetime]], location: str, staff: User | None
) -> list[str]:
    """For each planned slot: an existing slot of the course at the same place, or run by the
    same staff member, that overlaps it (named), or ''."""
    if not plans:
        return []
    lo, hi = min(p[0] for p in plans), max(p[1] for p in plans)
    existing = list(
        CheckoffSlot.objects.filter(
            set__course=course, starts_at__lt=hi, ends_at__gt=lo
        ).select_related("set", "staff")
    )
    out = []
    for start, end in plans:
        why = ""
        for e in existing:
            if e.starts_at < end and e.ends_at > start:
                if e.location.strip().lower() == location.strip().lower():
                    why = f"{label(e, course)} ({e.set.title}) is already there then"
                    break
                if staff is not None and e.staff_id == staff.pk:
                    why = f"{staff.get_full_name()} runs {label(e, course)} ({e.set.title}) then"
                    break
        out.append(why)
    return out


def _staff_of(course: Course, staff_id: int | None) -> User | None:
    if not staff_id:
        return None
    found = next((u for u in staff_members(course) if u.pk == staff_id), None)
    if found is None:
        raise DomainError("Choose a TA or instructor of this course.", field="staff")
    return found


def _check_common(location: str, capacity: int) -> str:
    location = (location or "").strip()
    if not location:
        raise DomainError(
            "Say where the slots are (a room, or a video-call link).", field="location"
        )
    if not 1 <= capacity <= 50:
        raise DomainError("Capacity is a number of groups from 1 to 50.", field="capacity")
    return location[:120]


def _today(course: Course) -> dt.date:
    return timezone.localdate(timezone=course.tz)


def _refuse_past(course: Course, first: dt.datetime, *, field: str) -> None:
    """Nobody can book a slot that has already begun: refuse a plan whose first slot would."""
    if first <= timezone.now():
        raise DomainError(
            f"A slot cannot start in the past: the first one would start "
            f"{format_instant(first, course.timezone)}. Pick a later day or start time.",
            field=field,
        )


def slots_plan(
    *,
    course: Course,
    day: dt.date,
    start: dt.time,
    end: dt.time,
    minutes: int,
    location: str,
    capacity: int = 1,
    staff_id: int | None = None,
    break_start: dt.time | None = None,
    break_end: dt.time | None = None,
) -> list[SlotPlan]:
    """A day's range cut into slots, each with its clash (if any). Changes nothing."""
    location = _check_common(location, capacity)
    staff = _staff_of(course, staff_id)
    try:
        cuts = rules.cut_day(
            day=day,
            start=start,
            end=end,
            minutes=minutes,
            tz_name=course.timezone,
            break_start=break_start,
            break_end=break_end,
        )
    except ValueError as exc:
        text = str(exc)
        raise DomainError(
            text, field="minutes" if "minutes" in text else "day" if "day" in text else "end"
        ) from None
    if not cuts:
        raise DomainError(
            f"No {minutes}-minute slot fits between {start:%H:%M} and {end:%H:%M}.", field="end"
        )
    if len(cuts) > 200:
        raise DomainError("At most 200 slots at once; cut a shorter range.", field="end")
    _refuse_past(course, cuts[0].starts_at, field="start" if day == _today(course) else "day")
    clashes = _clashes(course, [(c.starts_at, c.ends_at) for c in cuts], location, staff)
    return [
        SlotPlan(c.starts_at, c.ends_at, location, capacity, staff, why)
        for c, why in zip(cuts, clashes, strict=True)
    ]


def single_plan(
    *,
    course: Course,
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    location: str,
    capacity: int = 1,
    staff_id: int | None = None,
) -> list[SlotPlan]:
    location = _check_common(location, capacity)
    staff = _staff_of(course, staff_id)
    if not rules.plausible(starts_at):
        raise DomainError(
            f"Pick a start between {rules.FIRST_YEAR} and {rules.LAST_YEAR}.", field="starts_at"
        )
    if ends_at <= starts_at:
        raise DomainError("A slot must end after it starts.", field="ends_at")
    _refuse_past(course, starts_at, field="starts_at")
    if ends_at - starts_at > dt.timedelta(hours=8):
        raise DomainError("A slot lasts at most 8 hours.", field="ends_at")
    why = _clashes(course, [(starts_at, ends_at)], location, staff)[0]
    return [SlotPlan(starts_at, ends_at, location, capacity, staff, why)]


def slots_create(
    *, actor: User, course: Course, set_id: int, plans: list[SlotPlan]
) -> list[CheckoffSlot]:
    """Create the planned slots, all or none; refused while any clashes (checked again here, under
    the set's lock, so two staff members saving at once cannot both take a room)."""
    _require_staff(actor, course)
    with transaction.atomic():
        s = set_get(course, set_id)
        # Every set of the course, in id order: rooms and staff are shared across sets.
        list(
            CheckoffSet.objects.select_for_update()
            .filter(course=course)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        again = _clashes(
            course,
            [(p.starts_at, p.ends_at) for p in plans],
            plans[0].location if plans else "",
            plans[0].staff if plans else None,
        )
        bad = [
            f"{rules.slot_label(p.starts_at, p.location, course.timezone)}: {why}"
            for p, why in zip(plans, again, strict=True)
            if why
        ]
        if bad:
            raise Conflict(
                "Nothing was created; these slots clash: "
                + "; ".join(bad[:5])
                + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
                + "."
            )
        try:
            with transaction.atomic():
                made = CheckoffSlot.objects.bulk_create(
                    [
                        CheckoffSlot(
                            set=s,
                            starts_at=p.starts_at,
                            ends_at=p.ends_at,
                            location=p.location,
                            capacity=p.capacity,
                            staff=p.staff,
                        )
                        for p in plans
                    ]
                )
        except IntegrityError:
            raise Conflict(
                "Nothing was created: a slot at the same place and time already exists."
            ) from None
        audit_record(
            actor=actor,
            action="checkoffs.slots_create",
            course=course,
            obj=s,
            after={"slots": len(made)},
        )
    return made


def slot_delete(*, actor: User, course: Course, slot_id: int, confirm: bool = False) -> int:
    """Delete a slot. A booked slot needs `confirm`; its groups are e-mailed. Returns how many
    groups lost a booking."""
    _require_staff(actor, course)
    with transaction.atomic():
        slot = (
            CheckoffSlot.objects.select_for_update()
            .select_related("set")
            .filter(set__course=course, pk=slot_id)
            .first()
        )
        if slot is None:
            raise NotFound("No such slot.")
        held = list(slot.bookings.filter(cancelled_at__isnull=True).select_related("group"))
        if held and not confirm:
            raise Conflict(
                f"{_cap(label(slot, course))} is booked by "
                f"{', '.join(b.group.name for b in held)}; confirm to delete it and e-mail them."
            )
        what = {
            "set": slot.set.title,
            "slot": label(slot, course),
            "groups": [b.group_id for b in held],
        }
        audit_record(
            actor=actor, action="checkoffs.slot_delete", course=course, obj=slot, after=what
        )
        slot.delete()
        if held:
            from apps.checkoffs.tasks import email_slot_removed

            enqueue_on_commit(
                lambda: email_slot_removed.delay(course.pk, what),
                what="the e-mails to the booked groups",
                critical=False,
            )
    return len(held)


# ------------------------------------------------------------------ bookings


def _my_group(course: Course, actor: User) -> Group:
    group = group_for_student(course=course, user=actor)
    if group is None:
        raise NotAllowed("Only a member of a group can book for it; join a group first.")
    return group


def _lock_group(group: Group) -> None:
    list(Group.objects.select_for_update().filter(pk=group.pk).values_list("pk", flat=True))


def _slot(course: Course, slot_id: int) -> CheckoffSlot:
    slot = (
        CheckoffSlot.objects.select_related("set")
        .filter(set__course=course, pk=slot_id, set__published_at__isnull=False)
        .first()
    )
    if slot is None:
        raise NotFound("No such slot.")
    return slot


def _check_open(course: Course, slot: CheckoffSlot, now: dt.datetime, what: str) -> None:
    if not rules.is_open(slot.starts_at, course.checkoff_cutoff_hours, now):
        raise Conflict(
            rules.closed_message(
                slot.starts_at, slot.location, course.checkoff_cutoff_hours, course.timezone, what
            )
        )


def book(
    *,
    actor: User,
    course: Course,
    slot_id: int,
    move: bool = False,
    now: dt.datetime | None = None,
    for_group: Group | None = None,
    notify: bool = True,
) -> Booking:
    """Book the slot for the actor's whole group; with `move`, give up the group's place in the
    same set at the same time. Refused after the cut-off, when full, or when the group already
    holds a place in the set (without `move`). Staff may book `for_group`, past the cut-off."""
    now = now or timezone.now()
    if for_group is not None:
        _require_staff(actor, course)
        if for_group.course_id != course.pk:
            raise NotFound("No such group.")
        group = for_group
    else:
        group = _my_group(course, actor)
    slot = _slot(course, slot_id)
    if for_group is None:
        _check_open(course, slot, now, "book")
    with transaction.atomic():
        _lock_group(group)
        current = (
            Booking.objects.filter(HOLDS, set=slot.set, group=group).select_related("slot").first()
        )
        if current is not None:
            if current.slot_id == slot.pk:
                raise Conflict(f"Your group already holds {label(slot, course)}.")
            if not move:
                raise Conflict(
                    f"Your group already holds {label(current.slot, course)} for {slot.set.title}; "
                    "move to this slot instead, or cancel that one first."
                )
            if for_group is None:
                _check_open(course, current.slot, now, "move")
        ids = sorted({slot.pk} | ({current.slot_id} if current else set()))
        locked = {
            x.pk: x
            for x in CheckoffSlot.objects.select_for_update().filter(pk__in=ids).order_by("pk")
        }
        target = locked.get(slot.pk)
        if target is None:
            raise NotFound("That slot was just removed.")
        if target.booked >= target.capacity:
            raise Conflict(
                f"{_cap(label(target, course))} is full ({target.booked} of {target.capacity} "
                f"place{'s' if target.capacity != 1 else ''} taken); pick another slot."
            )
        if current is not None:
            current.cancelled_at, current.cancelled_by = now, actor
            current.save(update_fields=["cancelled_at", "cancelled_by"])
            CheckoffSlot.objects.filter(pk=current.slot_id).update(booked=F("booked") - 1)
        try:
            with transaction.atomic():
                booking = Booking.objects.create(
                    set=slot.set, slot=target, group=group, booked_by=actor
                )
                CheckoffSlot.objects.filter(pk=target.pk).update(booked=F("booked") + 1)
        except IntegrityError:  # the database's own guard: never reached while the locks above hold
            raise Conflict(
                f"{_cap(label(target, course))} could not be booked; reload and try again."
            ) from None
        audit_record(
            actor=actor,
            action="checkoffs.move" if current else "checkoffs.book",
            course=course,
            obj=booking,
            before={"slot": current.slot_id} if current else None,
            after={"slot": target.pk},
        )
        if notify:
            from apps.checkoffs.tasks import email_booking

            kind = "moved" if current else "booked"
            enqueue_on_commit(
                lambda: email_booking.delay(booking.pk, kind),
                what="the booking e-mails",
                critical=False,
            )
    booking.slot = target
    return booking


def cancel(*, actor: User, course: Course, slot_id: int, now: dt.datetime | None = None) -> Booking:
    now = now or timezone.now()
    group = _my_group(course, actor)
    slot = _slot(course, slot_id)
    with transaction.atomic():
        _lock_group(group)
        booking = Booking.objects.filter(HOLDS, slot=slot, group=group).first()
        if booking is None:
            raise NotFound(f"Your group has no booking in {label(slot, course)}.")
        _check_open(course, slot, now, "cancel")
        list(
            CheckoffSlot.objects.select_for_update().filter(pk=slot.pk).values_list("pk", flat=True)
        )
        booking.cancelled_at, booking.cancelled_by = now, actor
        booking.save(update_fields=["cancelled_at", "cancelled_by"])
        CheckoffSlot.objects.filter(pk=slot.pk).update(booked=F("booked") - 1)
        audit_record(actor=actor, action="checkoffs.cancel", course=course, obj=booking)
        from apps.checkoffs.tasks import email_booking

        enqueue_on_commit(
            lambda: email_booking.delay(booking.pk, "cancelled"),
            what="the cancellation e-mails",
            critical=False,
        )
    return booking


def record(
    *,
    actor: User,
    course: Course,
    booking_id: int,
    attendance: str,
    outcome: str = "",
    notes: str = "",
) -> Booking:
    """Staff mark attendance and the outcome, from the slot's start on (notes alone any time).
    Passing needs the group present; a redo frees the group to book again (the page and e-mail
    say so)."""
    _require_staff(actor, course)
    if attendance not in Booking.Attendance.values:
        raise DomainError("Attendance is present, no-show, or empty.", field="attendance")
    if outcome not in Booking.Outcome.values:
        raise DomainError("The outcome is passed, redo, or empty.", field="outcome")
    if outcome == Booking.Outcome.PASSED and attendance != Booking.Attendance.PRESENT:
        raise DomainError(
            "A group passes only when present; mark it present first.", field="outcome"
        )
    with transaction.atomic():
        b = (
            Booking.objects.select_for_update()
            .filter(set__course=course, pk=booking_id, cancelled_at__isnull=True)
            .first()
        )
        if b is None:
            raise NotFound("No such booking.")
        if (attendance or outcome) and timezone.now() < b.slot.starts_at:
            raise DomainError(
                "This checkoff has not started yet: attendance and outcome can be recorded from "
                f"{format_instant(b.slot.starts_at, course.timezone)}.",
                field="attendance",
            )
        before = {"attendance": b.attendance, "outcome": b.outcome}
        b.attendance, b.outcome, b.notes = attendance, outcome, (notes or "").strip()[:5000]
        b.recorded_by, b.recorded_at = actor, timezone.now()
        try:
            with transaction.atomic():
                b.save(
                    update_fields=["attendance", "outcome", "notes", "recorded_by", "recorded_at"]
                )
        except IntegrityError:
            raise Conflict(
                f"{b.group.name} has booked again since the redo; cancel that booking before "
                "changing this outcome."
            ) from None
        audit_record(
            actor=actor,
            action="checkoffs.record",
            course=course,
            obj=b,
            before=before,
            after={"attendance": attendance, "outcome": outcome},
        )
        if outcome == Booking.Outcome.REDO and before["outcome"] != outcome:
            from apps.checkoffs.tasks import email_booking

            enqueue_on_commit(
                lambda: email_booking.delay(b.pk, "redo"), what="the redo e-mail", critical=False
            )
    return b


def remind(
    *,
    actor: User,
    course: Course,
    set_id: int,
    group_ids: list[int] | None = None,
    now: dt.datetime | None = None,
) -> int:
    """E-mail the groups of a published set that hold no place in it (all, or the ones named).
    Refused within 10 minutes of the last reminder, so a double click sends one e-mail."""
    _require_staff(actor, course)
    now = now or timezone.now()
    with transaction.atomic():
        s = CheckoffSet.objects.select_for_update().get(pk=set_get(course, set_id).pk)
        if not s.published_at:
            raise Conflict("Publish the sign-up before reminding groups to book.")
        if s.reminded_at and now - s.reminded_at < REMIND_AGAIN_AFTER:
            raise Conflict(
                f"Reminders went out {int((now - s.reminded_at).total_seconds() // 60)} min ago; "
                f"wait {int(REMIND_AGAIN_AFTER.total_seconds() // 60)} minutes between reminders."
            )
        groups = unbooked_groups(s)
        if group_ids:
            groups = groups.filter(pk__in=group_ids)
        ids = list(groups.values_list("pk", flat=True))
        if not ids:
            raise Conflict("Every group has booked; nobody to remind.")
        s.reminded_at = now
        s.save(update_fields=["reminded_at"])
        audit_record(
            actor=actor, action="checkoffs.remind", course=course, obj=s, after={"groups": len(ids)}
        )
        from apps.checkoffs.tasks import email_unbooked

        enqueue_on_commit(
            lambda: email_unbooked.delay(s.pk, ids), what="the reminder e-mails", critical=True
        )
    return len(ids)
