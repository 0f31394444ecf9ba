"""Reminder e-mails before each person's own deadlines.

`reminders_due(course, now)` asks every registered reminder source for the deadlines due within the
largest offset (a few queries per source for the whole course) and keeps, per person and deadline,
the one reminder that fits now (`rules.reminder_offset_due`). `reminders_send` claims them in sets —
one `INSERT … ON CONFLICT DO NOTHING RETURNING` per batch of `REMINDER_BATCH` rows, the unique row
per person, item, offset and deadline deciding — and sends only what it claimed, so a second run, a
late run or a second worker sends nothing twice. Each distinct (item, deadline, offset) is rendered
once with a placeholder for the name and substituted per person, built as MIME once and copied per
person (`apps.core.mailbulk`); a batch is marked sent with one UPDATE and goes out over
`SMTP_SEND_CONNECTIONS` connections. The beat task sends the first batch itself and hands each later
one to the workers (`calendar.send_reminder_batch`), so a course's 31,000 reminders go out from
every worker at once.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape

from apps.calendar.models import CalendarSettings, Reminder
from apps.calendar.registry import Event, reminder_sources
from apps.calendar.rules import reminder_horizon, reminder_offset_due
from apps.core import mailbulk
from apps.core.models import Course, User
from apps.core.outbox import retry_delay  # one back-off for every e-mail
from apps.core.queue import broker_errors, task_named
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


NAME = "\u2063NAME\u2063"  # stands for the person's name in a once-rendered message


@dataclass
class SendTimes:
    """Where a run's time went (for bench/bench_reminders.py)."""

    claim: float = 0.0
    render: float = 0.0
    send: float = 0.0


def _claim_batch(
    course: Course, batch: list[DueReminder], *, sending: bool = False
) -> dict[tuple[int, str, int], int]:
    """Insert the batch's rows in one statement; the (user, item, offset) → row id of those this
    run inserted (the others were claimed before, by this or another run). `sending`: this run
    sends them itself, so they are marked sent in the same statement (what `batch_send` does
    first for a batch handed to a worker)."""
    now = timezone.now()
    sent_at = now if sending else None
    table = Reminder._meta.db_table
    returning = "ON CONFLICT DO NOTHING RETURNING id, user_id, item_uid, offset_hours"
    columns = "course_id, user_id, item_uid, offset_hours, due_at, claimed_at, sent_at"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One array per column: seven parameters for any batch size (a VALUES list of
            # 7,000 placeholders cost psycopg 80 ms per batch to parse, more than the insert).
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT %s::bigint, u, i, o, d, "  # noqa: S608 - the table name is the model's; every value is a parameter
                "%s::timestamptz, %s::timestamptz FROM unnest(%s::bigint[], %s::text[], "
                f"%s::int[], %s::timestamptz[]) AS t(u, i, o, d) {returning}",
                [
                    course.pk,
                    now,
                    sent_at,
                    [r.user_id for r in batch],
                    [r.event.uid for r in batch],
                    [r.offset_hours for r in batch],
                    [r.event.start for r in batch],
                ],
            )
        else:  # SQLite (`make run`): a VALUES list
            rows = [
                (course.pk, r.user_id, r.event.uid, r.offset_hours, r.event.start, now, sent_at)
                for r in batch
            ]
            placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {placeholders} {returning}",  # noqa: S608 - as above
                [v for row in rows for v in row],
            )
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
    *,
    course: Course,
    now: dt.datetime | None = None,
    times: SendTimes | None = None,
    spread: bool = False,
) -> int:
    """Send the course's reminders that fit now and were not sent before. With `spread` (the
    beat task) the first batch is sent here and every later one is handed to the workers as a
    task of its own (sent here after all if the queue does not answer). Returns how many were
    sent here or handed on."""
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
    here = True  # the first batch with anything claimed is sent by this run itself
    size = max(1, settings.REMINDER_BATCH)
    # Batches sent here go out on one stream: claiming and rendering the next batch overlaps
    # sending this one, over connections opened once for the run. Half a batch of queue keeps
    # the connections busy while the next batch is claimed (about 50 ms) and keeps what is
    # marked sent but not yet on the wire to about one batch, as it was before the stream.
    marked: set[int] = set()
    delivered: list[int] = []
    stream = mailbulk.Stream(delivered, queued=max(1, size // 2))
    try:
        for i in range(0, len(due), size):
            batch = due[i : i + size]
            sending = here or not spread
            t = time.perf_counter()
            with transaction.atomic():
                claimed = _claim_batch(course, batch, sending=sending)
            times.claim += time.perf_counter() - t
            if not claimed:
                continue
            t = time.perf_counter()
            mine = [
                (r, claimed[(r.user_id, r.event.uid, r.offset_hours)])
                for r in batch
                if (r.user_id, r.event.uid, r.offset_hours) in claimed  # the others: another run's
            ]
            messages = messages_for(course, mine, users, rendered)
            times.render += time.perf_counter() - t
            if not sending and _hand_off(messages):
                sent += len(claimed)
                continue
            here = False
            t = time.perf_counter()
            ids = set(claimed.values()) if sending else _mark_sent(messages)
            marked |= ids
            for m in _personal(messages, ids):
                stream.put(m)
            times.send += time.perf_counter() - t
    finally:
        t = time.perf_counter()
        error = stream.close()
        times.send += time.perf_counter() - t
        unsent = _sent_or_retried(marked, delivered, error)
    return sent + len(marked) - len(unsent)


def messages_for(
    course: Course,
    items: list[tuple[DueReminder, int]],
    users: dict[int, User],
    rendered: dict[tuple[str, dt.datetime, int], tuple[str, str, str]],
) -> Batch:
    """The batch for `items` (each reminder with its claimed row's id): one message per
    (item, deadline, offset), rendered once into `rendered`, with a copy per person."""
    copies: dict[tuple[str, dt.datetime, int], list[list[Any]]] = {}
    for r, pk in items:
        key = (r.event.uid, r.event.start, r.offset_hours)
        if key not in rendered:
            rendered[key] = _rendered(course, r)
        user = users[r.user_id]
        name = user.get_full_name() or user.email
        copies.setdefault(key, []).append([user.email, name, escape(name), pk])
    return [[*rendered[key], same] for key, same in copies.items()]


# A batch as it travels to a worker (JSON): [[subject, text, html, [[to, name, html name,
# reminder id], …]], …] — each message rendered once, the name left as `NAME`.
Batch = list[list[Any]]


def _hand_off(messages: Batch) -> bool:
    """Queue a batch for any worker; False if the queue did not answer."""
    try:
        task_named("calendar.send_reminder_batch").delay(messages)
    except broker_errors() as exc:
        log.warning("reminder batch sent here, the queue did not answer: %s", exc)
        return False
    return True


def _mark_sent(messages: Batch) -> set[int]:
    """Mark the batch's reminders sent, those not marked before (a batch delivered twice, after
    its worker died, finds them marked): the ids this sender now owns."""
    ids = [c[3] for m in messages for c in m[3]]
    with transaction.atomic():
        mine = set(
            Reminder.objects.select_for_update()
            .filter(pk__in=ids, sent_at__isnull=True, failed_at__isnull=True)
            .values_list("pk", flat=True)
        )
        Reminder.objects.filter(pk__in=mine).update(sent_at=timezone.now())
    return mine


def _personal(messages: Batch, mine: set[int]) -> list[mailbulk.Personal]:
    out = []
    for subject, text, html, copies in messages:
        kept = [
            mailbulk.Copy(to, name, html_name, key=pk)
            for to, name, html_name, pk in copies
            if pk in mine
        ]
        if kept:
            out.append(mailbulk.Personal(subject, text, html, name_token=NAME, copies=kept))
    return out


def _sent_or_retried(
    marked: set[int], delivered: list[int], error: BaseException | None
) -> set[int]:
    """After a stream: if the SMTP server refused or went away, every marked reminder it did
    not accept is unmarked with its attempt counted (`attempt_failed`): the job sweep sends it
    again later, so each person gets it once. The ids not sent."""
    if error is None:
        return set()
    unsent = marked - set(delivered)
    log.warning(
        "%d of %d reminders not sent (%s: %s); the job sweep sends them again",
        len(unsent),
        len(marked),
        type(error).__name__,
        error,
    )
    attempt_failed(unsent, f"{type(error).__name__}: {error}")
    return unsent


def batch_send(messages: Batch) -> int:
    """Send one batch: first mark its reminders sent, those not marked before (a batch delivered
    twice, after its worker died, finds them marked and sends nothing again), then send them over
    SMTP. Should the server refuse or go away half-way, the copies it had accepted stay sent and
    every other one is unmarked with its attempt counted (`attempt_failed`): the job sweep sends
    it again later, so each person gets it once. Returns how many the server accepted."""
    mine = _mark_sent(messages)
    if not mine:
        return 0
    delivered: list[int] = []
    stream = mailbulk.Stream(delivered, queued=len(mine))
    try:
        for m in _personal(messages, mine):
            stream.put(m)
    finally:
        unsent = _sent_or_retried(mine, delivered, stream.close())
    return len(mine) - len(unsent)


def attempt_failed(ids: set[int], reason: str) -> None:
    """Unmark these reminders and count the attempt: the sweep sends each again after
    `retry_delay`; the last allowed attempt gives it up (failed, with the reason)."""
    if not ids:
        return
    now = timezone.now()
    with transaction.atomic():
        rows = Reminder.objects.select_for_update().filter(pk__in=ids)
        for attempts in sorted(set(rows.values_list("attempts", flat=True))):
            n = attempts + 1
            given_up = n >= settings.REMINDER_MAX_ATTEMPTS
            Reminder.objects.filter(pk__in=ids, attempts=attempts).update(
                sent_at=None,
                attempts=n,
                last_error=reason[:300],
                retry_at=None if given_up else now + retry_delay(n),
                failed_at=now if given_up else None,
            )
