"""Notification e-mails that are never lost and never sent twice: written down, then sent.

A task that tells people something (a node move, a booking, a regrade answer) does not hand its
message to SMTP directly: `post` records each message as an `OutgoingMail` row whose key is the
task run's id and the message's place in it, then sends the rows it recorded. A row is marked
sent as soon as the server has taken it; a message the server refused, or that was in flight
when the server went away, counts an attempt and waits (`retry_at`, doubling from
`REMINDER_RETRY_BASE_S` up to an hour). Core's job sweep (`core.sweep_jobs`, every minute) sends
what waits, takes over rows whose worker died after claiming them, and gives a message up after
`REMINDER_MAX_ATTEMPTS` with the reason on the Jobs page.

Why the key is the run's: Celery redelivers a task whose worker died, and the redelivered run
computes the same messages; `INSERT … ON CONFLICT DO NOTHING` on the key keeps the first copy,
and a copy already sent is not sent again. Each message's Message-ID comes from its key, so even
the one window left — the server took it, the worker died before marking it — shows up in the
reader's mailbox as the same message.

Inside the caller's own transaction the rows commit with the change they tell about and are sent
once it commits; elsewhere (a task in autocommit) they are sent at once.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.utils import DNS_NAME
from django.db import transaction
from django.db.models import Min, Q
from django.utils import timezone

from apps.core.jobs import Job
from apps.core.models import OutgoingMail
from apps.core.transactions import in_own_transaction

log = logging.getLogger(__name__)

KIND = "notification e-mails"


@dataclass(frozen=True)
class Attachment:
    name: str
    content: bytes
    mimetype: str


@dataclass(frozen=True)
class Mail:
    to: Sequence[str]
    subject: str
    body: str
    attachments: Sequence[Attachment] = ()


def run_id() -> str:
    """The running Celery task's id (the same on a redelivered run), or a fresh one."""
    from celery import current_task

    request = getattr(current_task, "request", None)
    return str(getattr(request, "id", None) or uuid.uuid4())


def _key(kind: str, run: str, index: int) -> str:
    return hashlib.sha256(f"{kind}\x00{run}\x00{index}".encode()).hexdigest()


def post(kind: str, mails: Sequence[Mail], *, course_id: int | None, run: str = "") -> int:
    """Record `mails` (those with anyone to send to) and send them; see the module. Returns how
    many messages were recorded by this call (0 when this run had recorded them before)."""
    run = run or run_id()
    rows = [
        OutgoingMail(
            key=_key(kind, run, i),
            course_id=course_id,
            kind=kind,
            to=sorted(set(filter(None, m.to))),
            subject=m.subject[:300],
            body=m.body,
            attachments=[
                {
                    "name": a.name,
                    "mimetype": a.mimetype,
                    "content": base64.b64encode(a.content).decode(),
                }
                for a in m.attachments
            ],
        )
        for i, m in enumerate(mails)
        if any(m.to)
    ]
    if not rows:
        return 0
    keys = [r.key for r in rows]
    before = OutgoingMail.objects.filter(key__in=keys).count()
    OutgoingMail.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(OutgoingMail.objects.filter(key__in=keys).values_list("pk", flat=True))
    if in_own_transaction():
        transaction.on_commit(lambda: deliver(ids))
    else:
        deliver(ids)
    return len(rows) - before


def _claim(ids: Sequence[int], now: dt.datetime) -> list[OutgoingMail]:
    """Take the unsent, not given up rows of `ids` that no live worker holds."""
    grace = now - dt.timedelta(seconds=settings.REMINDER_RETRY_GRACE_S)
    with transaction.atomic():
        rows = list(
            OutgoingMail.objects.select_for_update(skip_locked=True)
            .filter(pk__in=ids, sent_at__isnull=True, failed_at__isnull=True)
            .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lte=grace) | Q(retry_at__lte=now))
            .order_by("pk")
        )
        OutgoingMail.objects.filter(pk__in=[r.pk for r in rows]).update(
            claimed_at=now, retry_at=None
        )
    return rows


def _message(row: OutgoingMail, connection: BaseEmailBackend) -> EmailMessage:
    msg = EmailMessage(
        row.subject,
        row.body,
        None,
        list(row.to),
        connection=connection,
        headers={"Message-ID": f"<{row.key}@{DNS_NAME}>"},
    )
    for a in row.attachments:
        msg.attach(a["name"], base64.b64decode(a["content"]), a["mimetype"])
    return msg


def retry_delay(attempts: int) -> dt.timedelta:
    """How long after its `attempts`-th failed send a message is tried again (doubling, ≤ 1 h)."""
    base = max(1, settings.REMINDER_RETRY_BASE_S)
    return dt.timedelta(seconds=min(3600, base * 2 ** max(0, attempts - 1)))


def _failed(rows: Sequence[OutgoingMail], reason: str) -> None:
    now = timezone.now()
    with transaction.atomic():
        for r in rows:
            n = r.attempts + 1
            given_up = n >= settings.REMINDER_MAX_ATTEMPTS
            OutgoingMail.objects.filter(pk=r.pk, sent_at__isnull=True).update(
                attempts=n,
                last_error=reason[:300],
                retry_at=None if given_up else now + retry_delay(n),
                failed_at=now if given_up else None,
            )


def deliver(ids: Sequence[int]) -> int:
    """Send the rows of `ids` that wait; returns how many the server took. A failure is
    counted on the message it hit and on every message after it (their turn comes again)."""
    rows = _claim(ids, timezone.now())
    if not rows:
        return 0
    sent = 0
    try:
        with get_connection() as connection:
            for i, row in enumerate(rows):
                try:
                    _message(row, connection).send()
                except Exception as exc:  # refused or broke off: this one and the rest wait
                    log.warning(
                        "%d of %d notification e-mails not sent (%s: %s); the job sweep sends "
                        "them again",
                        len(rows) - i,
                        len(rows),
                        type(exc).__name__,
                        exc,
                    )
                    _failed(rows[i:], f"{type(exc).__name__}: {exc}")
                    return sent
                OutgoingMail.objects.filter(pk=row.pk).update(sent_at=timezone.now())
                sent += 1
    except Exception as exc:  # the connection could not be opened or closed
        if sent == 0:
            _failed(rows, f"{type(exc).__name__}: {exc}")
        else:
            log.warning("closing the SMTP connection failed: %s", exc)
    return sent


def _waiting(now: dt.datetime) -> Q:
    grace = now - dt.timedelta(seconds=settings.REMINDER_RETRY_GRACE_S)
    return Q(sent_at__isnull=True, failed_at__isnull=True) & (
        Q(retry_at__lte=now)
        | Q(retry_at__isnull=True, claimed_at__lte=grace)
        | Q(claimed_at__isnull=True, created_at__lte=grace)
    )


def sweep(now: dt.datetime) -> list[str]:
    """Send again up to `REMINDER_BATCH` waiting messages; one line when any waited."""
    ids = list(
        OutgoingMail.objects.filter(_waiting(now))
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[: max(1, settings.REMINDER_BATCH)]
    )
    if not ids:
        return []
    sent = deliver(ids)
    return [f"{sent} of {len(ids)} waiting notification e-mails sent"]


def listed(course_id: int | None) -> list[Job]:
    """Messages waiting to be sent again and those given up, one row per course and state."""
    rows = OutgoingMail.objects.filter(sent_at__isnull=True).filter(
        Q(attempts__gt=0) | Q(failed_at__isnull=False)
    )
    if course_id is not None:
        rows = rows.filter(course_id=course_id)
    jobs = []
    for failed in (False, True):
        part = rows.filter(failed_at__isnull=not failed)
        counts = Counter(part.values_list("course__code", flat=True))
        for code, n in sorted(counts.items(), key=lambda kv: kv[0] or ""):
            mine = part.filter(course__code=code) if code else part.filter(course__isnull=True)
            since = mine.aggregate(m=Min("created_at"))["m"]
            last = mine.order_by("-pk").values_list("last_error", flat=True).first()
            what = "not sent (given up)" if failed else "waiting to be sent again"
            jobs.append(
                Job(
                    KIND,
                    f"{code or 'site'}: {n} notification e-mails {what}",
                    "failed" if failed else "queued",
                    since,
                    last or "",
                    f"/c/{code}/jobs/" if code else "",
                )
            )
    return jobs
