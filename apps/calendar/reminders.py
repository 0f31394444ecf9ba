"""Reminder e-mails before each person's own deadlines.

`reminders_due(course, now)` asks every registered reminder source for the deadlines due within
the largest offset (a few queries per source for the whole course) and keeps, per person and
deadline, the one reminder that fits now (`rules.reminder_offset_due`). `reminders_send` claims
them in sets — one `INSERT … ON CONFLICT DO NOTHING RETURNING` per batch of `BATCH` rows, the
unique row per person, item, offset and deadline deciding — and sends only what it claimed, so a
second run, a late run or a second worker sends nothing twice. Each distinct (item, deadline,
offset) is rendered once with a placeholder for the name and substituted per person, built as
MIME once and copied per person (`apps.core.mailbulk`); a batch goes out over one SMTP
connection and is marked sent with one UPDATE.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import get_connection
from django.db import connection, transaction
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape

from apps.calendar.models import CalendarSettings, Reminder
from apps.calendar.registry import Event, reminder_sources
from apps.calendar.rules import reminder_horizon, reminder_offset_due
from apps.core import mailbulk
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


BATCH = 1000
NAME = "\u2063NAME\u2063"  # stands for the person's name in a once-rendered message


@dataclass
class SendTimes:
    """Where a run's time went (for bench/bench_reminders.py)."""

    claim: float = 0.0
    render: float = 0.0
    send: float = 0.0


def _claim_batch(course: Course, batch: list[DueReminder]) -> dict[tuple[int, str, int], int]:
    """Insert the batch's rows in one statement; the (user, item, offset) → row id of those this
    run inserted (the others were claimed before, by this or another run)."""
    now = timezone.now()
    rows = [(course.pk, r.user_id, r.event.uid, r.offset_hours, r.event.start, now) for r in batch]
    placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(rows))
    table = Reminder._meta.db_table
    sql = (
        f"INSERT INTO {table} (course_id, user_id, item_uid, offset_hours, due_at, claimed_at) "  # noqa: S608 - the table name is the model's; every value is a parameter
        f"VALUES {placeholders} ON CONFLICT DO NOTHING RETURNING id, user_id, item_uid, "
        "offset_hours"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [v for row in rows for v in row])
        return {(u, item, off): pk for pk, u, item, off in cursor.fetchall()}


def _rendered(course: Course, r: DueReminder) -> tuple[str, str, str]:
    """(subject, text, html) for a reminder, the name left as `NAME`."""
    e = r.event
    due = format_instant(e.start, course.timezone)
    url = settings.SITE_URL.rstrip("/") + (e.path or f"/c/{course.code}/calendar/")
    calendar_url = f"{settings.SITE_URL.rstrip('/')}/c/{course.code}/calendar/"

    class Person:
        email = NAME

        @staticmethod
        def get_full_name() -> str:
            return NAME

    context = {
        "course": course,
        "user": Person(),
        "event": e,
        "due": due,
        "url": url,
        "hours": r.offset_hours,
        "calendar_url": calendar_url,
    }
    subject = f"[{course.code}] Reminder: {e.title} is due {due}"
    text = render_to_string("calendar/email/reminder.txt", context)
    html = render_to_string("calendar/email/reminder.html", context)
    return subject, text, html


def reminders_send(
    *, course: Course, now: dt.datetime | None = None, times: SendTimes | None = None
) -> int:
    """Send the course's reminders that fit now and were not sent before. Returns how many."""
    now = now or timezone.now()
    times = times if times is not None else SendTimes()
    due = reminders_due(course=course, now=now)
    if not due:
        return 0
    users = {
        u.pk: u
        for u in User.objects.filter(pk__in={r.user_id for r in due}, is_active=True)
        .exclude(email="")
        .only("pk", "email", "full_name", "is_active")
    }
    due = [r for r in due if r.user_id in users]
    rendered: dict[tuple[str, dt.datetime, int], tuple[str, str, str]] = {}
    sent = 0
    with get_connection() as mailer:
        for i in range(0, len(due), BATCH):
            batch = due[i : i + BATCH]
            t = time.perf_counter()
            with transaction.atomic():
                claimed = _claim_batch(course, batch)
            times.claim += time.perf_counter() - t
            if not claimed:
                continue
            t = time.perf_counter()
            copies: dict[tuple[str, dt.datetime, int], list[mailbulk.Copy]] = {}
            ids = []
            for r in batch:
                pk = claimed.get((r.user_id, r.event.uid, r.offset_hours))
                if pk is None:
                    continue  # another run has it
                key = (r.event.uid, r.event.start, r.offset_hours)
                if key not in rendered:
                    rendered[key] = _rendered(course, r)
                user = users[r.user_id]
                name = user.get_full_name() or user.email
                copies.setdefault(key, []).append(mailbulk.Copy(user.email, name, escape(name)))
                ids.append(pk)
            times.render += time.perf_counter() - t
            t = time.perf_counter()
            try:
                mailbulk.send_all(
                    mailer,
                    [
                        mailbulk.Personal(*rendered[key], name_token=NAME, copies=same)
                        for key, same in copies.items()
                    ],
                )
            except Exception:  # an SMTP failure: the rows stay claimed (at most once), logged
                log.exception("a batch of %d reminders could not be sent", len(ids))
                times.send += time.perf_counter() - t
                continue
            Reminder.objects.filter(pk__in=ids).update(sent_at=timezone.now())
            times.send += time.perf_counter() - t
            sent += len(ids)
    return sent
