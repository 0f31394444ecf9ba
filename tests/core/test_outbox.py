"""Notification e-mails when the SMTP server goes away: a real server (aiosmtpd on loopback) that
stops half-way through a group's booking e-mails and comes back. Each member gets theirs exactly
once, with its .ics; a redelivered task run sends nothing again; a server that never comes back
ends with its reason on the Jobs page."""

from __future__ import annotations

import datetime as dt
import email
from collections import Counter

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.checkoffs.models import Booking
from apps.checkoffs.tasks import email_booking
from apps.compute.board.tasks import notify_node_move
from apps.core import outbox
from apps.core.models import OutgoingMail
from tests.checkoffs.conftest import make_signup

pytestmark = pytest.mark.django_db


def booked(n_members: int = 4) -> tuple[Booking, set[str]]:
    s = make_signup(n_groups=1)
    group = s.groups[0]
    b = Booking.objects.create(set=s.set, slot=s.slots[0], group=group, booked_by=s.student(0))
    people = set(group.memberships.values_list("user__email", flat=True))
    assert len(people) == n_members
    return b, people


def test_smtp_stopped_mid_batch_then_back_every_member_gets_the_booking_once(sink) -> None:  # type: ignore[no-untyped-def]
    b, people = booked()
    sink.stop_after = 2
    sink.start()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        assert email_booking.apply(args=(b.pk, "booked"), task_id="run-1").get() == 4
    rows = OutgoingMail.objects.filter(kind="checkoffs.email_booking")
    assert rows.count() == 4
    assert len(sink.got) == 2 == rows.filter(sent_at__isnull=False).count()
    waiting = rows.filter(sent_at__isnull=True)
    assert [(r.attempts, r.retry_at is not None) for r in waiting] == [(1, True)] * 2

    # Celery redelivers the same run (its worker died after sending): nothing new, nothing twice.
    with time_machine.travel(start + dt.timedelta(seconds=5), tick=False):
        email_booking.apply(args=(b.pk, "booked"), task_id="run-1").get()
    assert rows.count() == 4
    assert len(sink.got) == 2

    # Still down at the first retry: one more attempt counted, nothing sent.
    with time_machine.travel(start + dt.timedelta(minutes=2), tick=False):
        assert outbox.sweep(timezone.now()) == ["0 of 2 waiting notification e-mails sent"]
    assert {r.attempts for r in rows.filter(sent_at__isnull=True)} == {2}

    sink.stop_after = None
    sink.start()  # back, on the same port
    with time_machine.travel(start + dt.timedelta(minutes=10), tick=False):
        assert outbox.sweep(timezone.now()) == ["2 of 2 waiting notification e-mails sent"]
        assert outbox.sweep(timezone.now()) == []
    assert Counter(sink.got) == Counter(dict.fromkeys(people, 1))
    files = [
        part.get_filename()
        for raw in sink.messages
        for part in email.message_from_bytes(raw).walk()
        if part.get_filename()
    ]
    assert files == ["checkoff.ics"] * 4  # the retried copies carry the event too
    ids = {email.message_from_bytes(raw)["Message-ID"] for raw in sink.messages}
    assert len(ids) == 4  # one Message-ID per person's message


def test_a_server_that_never_comes_back_gives_up_with_its_reason_on_the_jobs_page(
    sink, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.REMINDER_MAX_ATTEMPTS = 2
    b, _ = booked()  # the sink is never started
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        email_booking.apply(args=(b.pk, "booked")).get()
    with time_machine.travel(start + dt.timedelta(minutes=2), tick=False):
        outbox.sweep(timezone.now())
    rows = OutgoingMail.objects.all()
    assert [(r.attempts, r.failed_at is not None) for r in rows] == [(2, True)] * 4
    assert "ConnectionRefusedError" in rows[0].last_error
    with time_machine.travel(start + dt.timedelta(hours=2), tick=False):
        assert outbox.sweep(timezone.now()) == []  # given up: never tried again
    client = Client()
    client.force_login(b.slot.staff)  # the set's TA
    page = client.get(f"/c/{b.set.course.code}/jobs/").content.decode()
    assert "4 notification e-mails not sent (given up)" in page
    assert "ConnectionRefusedError" in page


def test_a_worker_that_died_after_claiming_is_taken_over_by_the_sweep(sink) -> None:  # type: ignore[no-untyped-def]
    _b, people = booked()
    sink.start()
    start = timezone.now()
    with time_machine.travel(start, tick=False):  # recorded and claimed, then the worker died
        rows = [
            OutgoingMail(
                key=f"k{i}", kind="checkoffs.email_booking", to=[to], subject="s", body="b"
            )
            for i, to in enumerate(sorted(people))
        ]
        OutgoingMail.objects.bulk_create(rows)
        OutgoingMail.objects.update(claimed_at=start)
    with time_machine.travel(start + dt.timedelta(minutes=1), tick=False):
        assert outbox.sweep(timezone.now()) == []  # a live worker may still be sending them
    with time_machine.travel(start + dt.timedelta(minutes=6), tick=False):
        assert outbox.sweep(timezone.now()) == ["4 of 4 waiting notification e-mails sent"]
    assert Counter(sink.got) == Counter(dict.fromkeys(people, 1))


def test_a_node_move_answer_recorded_in_autocommit_goes_out_at_once(mailoutbox) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.models import NodeMove
    from tests.factories import NodeFactory, group_of

    b, _ = booked()
    course = b.set.course
    group = group_of(course, 4)
    old, new = NodeFactory(course=course), NodeFactory(course=course)
    move = NodeMove.objects.create(
        course=course,
        group=group,
        from_node=old,
        to_node=new,
        status="approved",
        requested_by=b.booked_by,
    )
    assert notify_node_move.apply(args=(move.pk,)).get() == 4
    assert len(mailoutbox) == 1
    assert len(mailoutbox[0].to) == 4
    assert new.name in mailoutbox[0].body
    assert OutgoingMail.objects.get(kind="compute.notify_node_move").sent_at is not None
