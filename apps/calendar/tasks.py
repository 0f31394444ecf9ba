"""Thin Celery tasks for the calendar: reminders (beat) and moved-deadline e-mails."""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from django.conf import settings

from apps.calendar.reminders import Batch, batch_send, reminders_send
from apps.core import outbox
from apps.core.models import Course, User
from apps.core.timefmt import format_instant


@shared_task(name="calendar.send_reminders")
def send_reminders() -> int:
    """Every course's reminders that fit now (beat runs it every few minutes). Safe to run
    twice or on two workers at once: each reminder is claimed by a unique row before sending."""
    return sum(
        reminders_send(course=course, spread=True)
        for course in Course.objects.exclude(reminder_hours=[]).order_by("pk")
    )


@shared_task(name="calendar.send_reminder_batch")
def send_reminder_batch(messages: Batch) -> int:
    """One batch of claimed reminders, handed on by `send_reminders` (reminders.batch_send)."""
    return batch_send(messages)


@shared_task(name="calendar.email_deadline_moved")
def email_deadline_moved(
    course_id: int, what: str, old_due: str, rows: list[list[object]], path: str
) -> int:
    """One e-mail per affected person: `rows` are [user_id, new deadline ISO, note]."""
    course = Course.objects.filter(pk=course_id).first()
    if course is None:
        return 0
    users = User.objects.in_bulk([int(r[0]) for r in rows])  # type: ignore[call-overload]
    old = format_instant(dt.datetime.fromisoformat(old_due), course.timezone)
    url = settings.SITE_URL.rstrip("/") + path
    mails = []
    for user_id, new_iso, note in rows:
        user = users.get(int(user_id))  # type: ignore[call-overload]
        if user is None or not user.is_active:
            continue
        new = format_instant(dt.datetime.fromisoformat(str(new_iso)), course.timezone)
        body = (
            f"Hello {user.get_full_name() or user.email},\n\nThe deadline of {what} has moved. "
            f"It was {old}.\nYour deadline is now "
            f"{new}{f' ({note})' if note else ''}.\n\n{url}\n— courseops · {course.code}\n"
        )
        mails.append(
            outbox.Mail([user.email], f"[{course.code}] {what}: deadline moved to {new}", body)
        )
    outbox.post("calendar.email_deadline_moved", mails, course_id=course.pk)
    return len(mails)
