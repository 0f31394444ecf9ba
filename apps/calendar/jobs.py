"""Reminder e-mails the SMTP server did not take, seen as jobs: the sweep sends them again and
the Jobs page lists what waits and what was given up.

A reminder is claimed (its unique row), marked sent, then handed to SMTP. When the server refuses
or goes away half-way, `reminders.batch_send` keeps the copies it had accepted marked and counts
an attempt on the others (`attempt_failed`). Core's `core.sweep_jobs` (every minute) runs `sweep`:
each reminder whose back-off has passed — or that was claimed and never tried, its worker gone —
is rendered again from its deadline as the reminder sources give it now and sent through the same
`batch_send`, so a copy already accepted is never sent again. A reminder whose deadline passed or
changed meanwhile is given up with that reason (the new deadline has reminders of its own).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, Min, Q

from apps.calendar.models import Reminder
from apps.calendar.registry import Event, reminder_sources
from apps.calendar.reminders import DueReminder, batch_send, messages_for
from apps.core.jobs import Job
from apps.core.models import Course, User

KIND = "reminder e-mails"


def _waiting(now: dt.datetime) -> Q:
    grace = now - dt.timedelta(seconds=settings.REMINDER_RETRY_GRACE_S)
    return Q(sent_at__isnull=True, failed_at__isnull=True) & (
        Q(retry_at__lte=now) | Q(retry_at__isnull=True, claimed_at__lte=grace)
    )


def _give_up(ids: list[int], reason: str, now: dt.datetime) -> None:
    if ids:
        with transaction.atomic():
            Reminder.objects.filter(pk__in=ids, sent_at__isnull=True).update(
                failed_at=now, retry_at=None, last_error=reason[:300]
            )


def resend(course: Course, rows: list[Reminder], now: dt.datetime) -> tuple[int, int]:
    """Send these claimed, unsent reminders of one course again. Returns (sent, given up)."""
    gone = [r.pk for r in rows if r.due_at <= now]
    live = [r for r in rows if r.due_at > now]
    _give_up(gone, "The deadline passed before the e-mail server took the reminder.", now)
    if not live:
        return 0, len(gone)
    start = min(r.due_at for r in live)
    end = max(r.due_at for r in live) + dt.timedelta(seconds=1)
    events: dict[tuple[int, str, dt.datetime], Event] = {}
    for source in reminder_sources():
        for user_id, event in source(course, start, end):
            events[(user_id, event.uid, event.start)] = event
    items = []
    changed: list[int] = []
    for r in live:
        found = events.get((r.user_id, r.item_uid, r.due_at))
        if found is None:
            changed.append(r.pk)
        else:
            items.append((DueReminder(r.user_id, found, r.offset_hours), r.pk))
    _give_up(changed, "The deadline changed or went away before the reminder could be sent.", now)
    # The same people `reminders_send` writes to: an account closed since is given up, not
    # retried every minute for ever.
    users = {
        u.pk: u
        for u in User.objects.filter(pk__in={r.user_id for r, _ in items}, is_active=True)
        .exclude(email="")
        .only("pk", "email", "full_name", "is_active")
    }
    closed = [pk for r, pk in items if r.user_id not in users]
    _give_up(closed, "The person's account was closed before the reminder could be sent.", now)
    items = [(r, pk) for r, pk in items if r.user_id in users]
    sent = batch_send(messages_for(course, items, users, {})) if items else 0
    return sent, len(gone) + len(changed) + len(closed)


def sweep(now: dt.datetime) -> list[str]:
    """Send again, per course, up to `REMINDER_BATCH` waiting reminders; one line per course."""
    waiting = Reminder.objects.filter(_waiting(now))
    lines = []
    by_course: dict[int, list[Reminder]] = defaultdict(list)
    for r in waiting.order_by("claimed_at", "pk")[: max(1, settings.REMINDER_BATCH)]:
        by_course[r.course_id].append(r)
    for course in Course.objects.filter(pk__in=by_course):
        sent, given_up = resend(course, by_course[course.pk], now)
        lines.append(f"{course.code}: {sent} reminders sent again, {given_up} given up")
    return lines


def listed(course_id: int | None) -> list[Job]:
    """Reminders waiting to be sent again, and those given up, one row per course and state."""
    rows = Reminder.objects.filter(sent_at__isnull=True).filter(
        Q(attempts__gt=0) | Q(failed_at__isnull=False)
    )
    if course_id is not None:
        rows = rows.filter(course_id=course_id)
    summary = (
        rows.annotate(failed=ExpressionWrapper(Q(failed_at__isnull=False), BooleanField()))
        .values("course__code", "failed")
        .annotate(n=Count("pk"), since=Min("claimed_at"))
        .order_by("course__code", "failed")
    )
    jobs = []
    for row in summary:
        last = (
            rows.filter(course__code=row["course__code"], failed_at__isnull=not row["failed"])
            .order_by("-claimed_at")
            .values_list("last_error", flat=True)
            .first()
        )
        what = "not sent (given up)" if row["failed"] else "waiting to be sent again"
        jobs.append(
            Job(
                KIND,
                f"{row['course__code']}: {row['n']} reminder e-mails {what}",
                "failed" if row["failed"] else "queued",
                row["since"],
                last or "",
                f"/c/{row['course__code']}/calendar/",
            )
        )
    return jobs
