"""Reminder e-mails before each person's own deadlines.

`reminders_due(course, now)` asks every registered reminder source for the deadlines due within
the largest offset (a few queries per source for the whole course) and keeps, per person and
deadline, the one reminder that fits now (`rules.reminder_offset_due`). `reminders_send` claims
each by inserting its `Reminder` row (unique per person, item, offset and deadline) and sends
only what it claimed, so a second run, a late run or a second worker sends nothing twice.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from apps.calendar.models import CalendarSettings, Reminder
from apps.calendar.registry import Event, reminder_sources
from apps.calendar.rules import reminder_horizon, reminder_offset_due
from apps.core.models import Course, User
from apps.core.timefmt import format_instant

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DueReminder:
    user_id: int
    event: Event
    offset_hours: int


def reminders_due(*, course: Course, now: dt.datetime) -> list[DueReminder]:
    """Every reminder that fits `now` for the course, before checking what was already sent,
    less the kinds each person turned off."""
    offsets = [int(o) for o in (course.reminder_hours or [])]
    if not offsets:
        return []
    horizon = reminder_horizon(offsets)
    off = {
        (row.user_id, kind)
        for row in CalendarSettings.objects.filter(course=course).exclude(reminders_off=[])
        for kind in row.reminders_off
    }
    out = []
    end = now + horizon + dt.timedelta(seconds=1)  # a deadline exactly `horizon` away is in
    for source in reminder_sources():
        for user_id, event in source(course, now, end):
            if (user_id, event.reminder_kind) in off:
                continue
            offset = reminder_offset_due(due=event.start, offsets=offsets, now=now)
            if offset is not None:
                out.append(DueReminder(user_id, event, offset))
    return out


def _claim(course: Course, r: DueReminder) -> Reminder | None:
    """Insert the reminder's row; None when it was already there (sent, or being sent)."""
    try:
        with transaction.atomic():
            return Reminder.objects.create(
                course=course,
                user_id=r.user_id,
                item_uid=r.event.uid,
                offset_hours=r.offset_hours,
                due_at=r.event.start,
            )
    except IntegrityError:
        return None


def _message(course: Course, user: User, r: DueReminder) -> EmailMultiAlternatives:
    e = r.event
    due = format_instant(e.start, course.timezone)
    url = settings.SITE_URL.rstrip("/") + (e.path or f"/c/{course.code}/calendar/")
    calendar_url = f"{settings.SITE_URL.rstrip('/')}/c/{course.code}/calendar/"
    context = {
        "course": course,
        "user": user,
        "event": e,
        "due": due,
        "url": url,
        "hours": r.offset_hours,
        "calendar_url": calendar_url,
    }
    subject = f"[{course.code}] Reminder: {e.title} is due {due}"
    text = render_to_string("calendar/email/reminder.txt", context)
    html = render_to_string("calendar/email/reminder.html", context)
    msg = EmailMultiAlternatives(subject, text, None, [user.email])
    msg.attach_alternative(html, "text/html")
    return msg


def reminders_send(*, course: Course, now: dt.datetime | None = None) -> int:
    """Send the course's reminders that fit now and were not sent before. Returns how many."""
    now = now or timezone.now()
    due = reminders_due(course=course, now=now)
    if not due:
        return 0
    seen = set(
        Reminder.objects.filter(
            course=course, due_at__gt=now, due_at__lte=now + reminder_horizon(course.reminder_hours)
        ).values_list("user_id", "item_uid", "offset_hours", "due_at")
    )
    fresh = [r for r in due if (r.user_id, r.event.uid, r.offset_hours, r.event.start) not in seen]
    users = User.objects.in_bulk({r.user_id for r in fresh})
    sent = 0
    with get_connection() as connection:
        for r in fresh:
            user = users.get(r.user_id)
            if user is None or not user.is_active or not user.email:
                continue
            claimed = _claim(course, r)
            if claimed is None:
                continue  # another run has it
            try:
                connection.send_messages([_message(course, user, r)])
            except Exception:  # an SMTP failure: the row stays claimed (at most once), logged
                log.exception("reminder %s for user %s could not be sent", r.event.uid, r.user_id)
                continue
            Reminder.objects.filter(pk=claimed.pk).update(sent_at=timezone.now())
            sent += 1
    return sent
