"""Reminders when the e-mail server goes away: a real SMTP server (aiosmtpd on loopback) stopped
half-way through a batch and started again. What it accepted stays sent; the rest is sent by the
job sweep once it is back — every claimed reminder arrives exactly once."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.calendar import jobs
from apps.calendar.models import Reminder
from apps.calendar.reminders import reminders_send
from apps.core.models import Role
from tests.calendar.test_reminders import course_with_a_deadline
from tests.factories import member

pytestmark = pytest.mark.django_db
DUE = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)


def test_smtp_stopped_mid_batch_then_back_every_reminder_arrives_once(sink, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SMTP_SEND_CONNECTIONS = 3
    course, _, _ = course_with_a_deadline(DUE, students=6)  # sent over 3 connections at once
    sink.stop_after = 2
    sink.start()
    with time_machine.travel(DUE - dt.timedelta(hours=5), tick=False):
        first = reminders_send(course=course)
    claimed = Reminder.objects.filter(course=course)
    people = set(claimed.values_list("user__email", flat=True))
    assert len(people) == claimed.count() == 6
    assert first == len(sink.got) >= 2  # what the server took before it stopped counts as sent
    assert first < 6
    assert claimed.filter(sent_at__isnull=False).count() == first
    waiting = claimed.filter(sent_at__isnull=True)
    assert {r.attempts for r in waiting} == {1}
    assert all(r.retry_at is not None for r in waiting)

    # Still down: the sweep tries, counts a second attempt, sends nothing twice.
    with time_machine.travel(DUE - dt.timedelta(hours=5) + dt.timedelta(minutes=2), tick=False):
        assert jobs.sweep(timezone.now()) == [f"{course.code}: 0 reminders sent again, 0 given up"]
    assert {r.attempts for r in claimed.filter(sent_at__isnull=True)} == {2}

    sink.stop_after = None
    sink.start()  # the server is back, on the same port
    with time_machine.travel(DUE - dt.timedelta(hours=5) + dt.timedelta(minutes=10), tick=False):
        lines = jobs.sweep(timezone.now())
        assert jobs.sweep(timezone.now()) == []  # nothing left to send
        assert reminders_send(course=course) == 0  # and the beat task claims nothing again
    assert lines == [f"{course.code}: {6 - first} reminders sent again, 0 given up"]
    assert Counter(sink.got) == Counter(dict.fromkeys(people, 1))
    assert claimed.filter(sent_at__isnull=True).count() == 0


def test_a_server_that_never_comes_back_ends_failed_with_its_reason_on_the_jobs_page(
    sink, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.REMINDER_MAX_ATTEMPTS = 2
    course, _, _ = course_with_a_deadline(DUE, students=3)  # the sink is never started
    start = DUE - dt.timedelta(hours=5)
    with time_machine.travel(start, tick=False):
        assert reminders_send(course=course) == 0
    with time_machine.travel(start + dt.timedelta(minutes=2), tick=False):
        jobs.sweep(timezone.now())
    rows = Reminder.objects.filter(course=course)
    assert [(r.attempts, r.failed_at is not None) for r in rows] == [(2, True)] * 3
    assert "ConnectionRefusedError" in rows[0].last_error
    with time_machine.travel(start + dt.timedelta(hours=1), tick=False):
        assert jobs.sweep(timezone.now()) == []  # given up: never tried again
    client = Client()
    client.force_login(member(course, Role.INSTRUCTOR))
    page = client.get(f"/c/{course.code}/jobs/").content.decode()
    assert f"{course.code}: 3 reminder e-mails not sent (given up)" in page
    assert "ConnectionRefusedError" in page


def test_a_reminder_claimed_by_a_worker_that_died_is_sent_by_the_sweep(sink) -> None:  # type: ignore[no-untyped-def]
    course, _, _ = course_with_a_deadline(DUE, students=2)
    sink.start()
    start = DUE - dt.timedelta(hours=5)
    with time_machine.travel(start, tick=False):
        # Claimed, then the worker vanished before it sent anything.
        from apps.calendar import reminders

        due = reminders.reminders_due(course=course, now=timezone.now())
        reminders._claim_batch(course, due)
    with time_machine.travel(start + dt.timedelta(minutes=1), tick=False):
        assert jobs.sweep(timezone.now()) == []  # within the grace: its worker may be sending
    with time_machine.travel(start + dt.timedelta(minutes=6), tick=False):
        assert jobs.sweep(timezone.now()) == [f"{course.code}: 2 reminders sent again, 0 given up"]
    assert len(sink.got) == 2


def test_a_reminder_for_an_account_closed_meanwhile_is_given_up_not_retried_for_ever(sink) -> None:  # type: ignore[no-untyped-def]
    course, _, group = course_with_a_deadline(DUE, students=2)
    start = DUE - dt.timedelta(hours=5)
    with time_machine.travel(start, tick=False):
        assert reminders_send(course=course) == 0  # the server is not up yet
    leaver = group.memberships.first().user
    leaver.is_active = False
    leaver.save(update_fields=["is_active"])
    sink.start()
    with time_machine.travel(start + dt.timedelta(minutes=2), tick=False):
        assert jobs.sweep(timezone.now()) == [f"{course.code}: 1 reminders sent again, 1 given up"]
    closed = Reminder.objects.get(course=course, user=leaver)
    assert closed.failed_at is not None
    assert "account was closed" in closed.last_error
    assert len(sink.got) == 1
