"""Checkoff e-mails, sent by a worker once the change has committed: a booking's confirmation
(with an .ics attachment, the same event as the calendar feed's), a move, a cancellation, a redo,
a removed slot, and the reminder to groups that have not booked."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from apps.calendar.ical import feed_calendar
from apps.checkoffs import rules
from apps.checkoffs.models import Booking, CheckoffSet
from apps.checkoffs.sources import booking_event
from apps.core import outbox
from apps.core.models import Course
from apps.core.timefmt import format_instant
from apps.groups.models import Group, GroupMembership


def _emails(group_ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for gid, email in GroupMembership.objects.filter(
        group_id__in=group_ids, left_at__isnull=True
    ).values_list("group_id", "user__email"):
        out.setdefault(gid, []).append(email)
    return out


@shared_task(name="checkoffs.email_booking")
def email_booking(booking_id: int, kind: str) -> int:
    """One e-mail to each current member of the booking's group. Booked and moved carry the
    event as an .ics file; its UID is the feed's, so importing it never makes a duplicate."""
    b = (
        Booking.objects.select_related("set__course", "slot", "slot__staff", "group", "booked_by")
        .filter(pk=booking_id)
        .first()
    )
    if b is None:
        return 0
    course: Course = b.set.course
    slot = b.slot
    when = format_instant(slot.starts_at, course.timezone)
    cutoff = format_instant(
        rules.cutoff_at(slot.starts_at, course.checkoff_cutoff_hours), course.timezone
    )
    who = b.booked_by.get_full_name() if b.booked_by else "A member of your group"
    url = f"{settings.SITE_URL}/c/{course.code}/checkoffs/?set={b.set_id}"
    subject, body = {
        "booked": (
            f"{b.set.title}: {when}",
            f"{who} booked {b.set.title} for {b.group.name}: {when}, {slot.location}. "
            f"Any member can move or cancel it until {cutoff}.",
        ),
        "moved": (
            f"{b.set.title} moved: {when}",
            f"{who} moved {b.group.name}'s {b.set.title} to {when}, "
            f"{slot.location}. Any member can move or cancel it until {cutoff}.",
        ),
        "cancelled": (
            f"{b.set.title} cancelled",
            f"{b.cancelled_by.get_full_name() if b.cancelled_by else 'Someone'} cancelled "
            f"{b.group.name}'s {b.set.title} ({when}, {slot.location}). Book another slot.",
        ),
        "redo": (
            f"{b.set.title}: please book again",
            f"The checkoff on {when} needs a redo"
            + (f": {b.notes}" if b.notes else ".")
            + " Your group can book another slot now.",
        ),
    }[kind]
    attach = kind in ("booked", "moved")
    ics = (
        feed_calendar(course=course, title=b.set.title, events=[booking_event(b, course)])
        if attach
        else b""
    )
    to = _emails([b.group_id]).get(b.group_id, [])
    files = [outbox.Attachment("checkoff.ics", ics, "text/calendar; method=PUBLISH")]
    mails = [
        outbox.Mail(
            [email], f"[{course.code}] {subject}", f"{body}\n\n{url}\n", files if attach else []
        )
        for email in to
    ]
    outbox.post("checkoffs.email_booking", mails, course_id=course.pk)
    return len(to)


@shared_task(name="checkoffs.email_slot_removed")
def email_slot_removed(course_id: int, what: dict[str, Any]) -> int:
    course = Course.objects.filter(pk=course_id).first()
    if course is None:
        return 0
    emails = [e for v in _emails(list(what.get("groups", []))).values() for e in v]
    body = (
        f"Course staff removed {what['slot']} of {what['set']}, which your group had booked. "
        f"Please book another slot: {settings.SITE_URL}/c/{course.code}/checkoffs/"
    )
    subject = f"[{course.code}] {what['set']}: your slot was removed"
    mails = [outbox.Mail([e], subject, body) for e in emails]
    outbox.post("checkoffs.email_slot_removed", mails, course_id=course.pk)
    return len(emails)


@shared_task(name="checkoffs.email_unbooked")
def email_unbooked(set_id: int, group_ids: list[int]) -> int:
    s = CheckoffSet.objects.select_related("course").filter(pk=set_id).first()
    if s is None:
        return 0
    course = s.course
    names = dict(Group.objects.filter(pk__in=group_ids).values_list("pk", "name"))
    by = f" by {format_instant(s.book_by, course.timezone)}" if s.book_by else ""
    messages = [
        outbox.Mail(
            [email],
            f"[{course.code}] Book a slot: {s.title}",
            f"{names.get(gid, 'Your group')} has not booked a slot for {s.title} yet. Any member "
            f"can book one for the whole group{by}: "
            f"{settings.SITE_URL}/c/{course.code}/checkoffs/?set={s.pk}",
        )
        for gid, emails in _emails(group_ids).items()
        for email in emails
    ]
    outbox.post("checkoffs.email_unbooked", messages, course_id=course.pk)
    return len(messages)
