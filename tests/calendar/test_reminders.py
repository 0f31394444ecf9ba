"""Reminder e-mails: the right people, the right time, once."""

from __future__ import annotations

import datetime as dt
import time
import zoneinfo
from pathlib import Path

import pytest
import time_machine
from django.core import mail

from apps.calendar import reminders
from apps.calendar.models import Reminder
from apps.calendar.reminders import reminders_due, reminders_send
from apps.calendar.services import reminders_set
from apps.calendar.tasks import send_reminders
from apps.core.models import Role
from apps.milestones.services import milestone_submit
from apps.slackdays.services import exception_grant, slack_apply
from tests.factories import AssignmentFactory, CourseFactory, MilestoneFactory, group_of, member

LA = zoneinfo.ZoneInfo("America/Los_Angeles")


def course_with_a_deadline(due: dt.datetime, students: int = 5):  # type: ignore[no-untyped-def]
    course = CourseFactory(reminder_hours=[48, 6])
    a = AssignmentFactory(
        course=course,
        code="A2",
        title="Pre-Training",
        due_at=due,
        release_at=due - dt.timedelta(days=14),
    )
    group = group_of(course, students)
    return course, a, group


@pytest.mark.django_db
def test_running_twice_in_the_same_minute_sends_each_email_once() -> None:
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, group = course_with_a_deadline(due)
    with time_machine.travel(due - dt.timedelta(hours=30), tick=False):
        assert reminders_send(course=course) == 5
        assert reminders_send(course=course) == 0
        send_reminders()  # the beat task, all courses
    assert len(mail.outbox) == 5
    assert {m.to[0] for m in mail.outbox} == {
        m.user.email for m in group.memberships.select_related("user")
    }
    msg = mail.outbox[0]
    assert "A2 Pre-Training" in msg.subject
    assert "Tue Feb 24, 2026, 11:59 PM PST" in msg.subject
    assert "11:59 PM PST" in msg.body
    assert f"/c/{course.code}/slack/" in msg.body
    html = msg.alternatives[0][0]  # type: ignore[index]
    assert "<strong>A2 Pre-Training</strong>" in html
    # the 6-hour reminder is another e-mail, once too
    with time_machine.travel(due - dt.timedelta(hours=5), tick=False):
        assert reminders_send(course=course) == 5
        assert reminders_send(course=course) == 0
    assert len(mail.outbox) == 10
    with time_machine.travel(due + dt.timedelta(minutes=1), tick=False):
        assert reminders_send(course=course) == 0


@pytest.mark.django_db
def test_a_task_that_was_down_sends_only_the_reminder_that_fits_now() -> None:
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, _ = course_with_a_deadline(due, students=4)
    with time_machine.travel(due - dt.timedelta(hours=2), tick=False):
        assert reminders_send(course=course) == 4
    assert {r.offset_hours for r in Reminder.objects.all()} == {6}
    assert all("6 hours" in m.body for m in mail.outbox)


@pytest.mark.django_db
def test_reminders_follow_each_students_effective_deadline() -> None:
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, group = course_with_a_deadline(due, students=4)
    staff = member(course, Role.INSTRUCTOR)
    accommodated = group.memberships.order_by("pk").first().user  # type: ignore[union-attr]
    exception_grant(
        actor=staff,
        course=course,
        kind="accommodation",
        hours=48,
        reason="DSP",
        student_ids=[accommodated.pk],
    )
    with time_machine.travel(due - dt.timedelta(hours=47), tick=False):
        got = {r.user_id for r in reminders_due(course=course, now=dt.datetime.now(dt.UTC))}
    assert accommodated.pk not in got
    assert len(got) == 3
    # ...and the accommodated student's 48 h reminder comes 48 h later
    with time_machine.travel(due + dt.timedelta(hours=1), tick=False):
        due_now = reminders_due(course=course, now=dt.datetime.now(dt.UTC))
    assert [(r.user_id, r.offset_hours) for r in due_now] == [(accommodated.pk, 48)]
    assert due_now[0].event.start == due + dt.timedelta(hours=48)


@pytest.mark.django_db
def test_a_slack_day_moves_the_reminder_and_a_submitted_milestone_has_none() -> None:
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, a, group = course_with_a_deadline(due, students=4)
    m = MilestoneFactory(course=course, key="proposal", name="Proposal", due_at=due)
    student = group.memberships.first().user  # type: ignore[union-attr]
    with time_machine.travel(due - dt.timedelta(days=3), tick=False):
        slack_apply(actor=student, course=course, assignment_id=a.pk)
        milestone_submit(
            actor=student,
            course=course,
            milestone_id=m.pk,
            link="https://example.edu/p.pdf",
            ai_used=False,
        )
    with time_machine.travel(due - dt.timedelta(hours=3), tick=False):
        kinds = {
            (r.event.kind, r.offset_hours)
            for r in reminders_due(course=course, now=dt.datetime.now(dt.UTC))
        }
    # the group's A2 is now a day later (48 h reminder window), the proposal is in
    assert kinds == {("assignment", 48)}


@pytest.mark.django_db
def test_people_who_turned_a_kind_off_get_none_of_it() -> None:
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, group = course_with_a_deadline(due, students=3)
    MilestoneFactory(course=course, key="proposal", name="Proposal", due_at=due)
    quiet = group.memberships.first().user  # type: ignore[union-attr]
    reminders_set(actor=quiet, course=course, off=["assignment"])
    with time_machine.travel(due - dt.timedelta(hours=3), tick=False):
        reminders_send(course=course)
    to_quiet = [m.subject for m in mail.outbox if m.to == [quiet.email]]
    assert len(to_quiet) == 1
    assert "Proposal" in to_quiet[0]
    assert len(mail.outbox) == 3 * 2 - 1


@pytest.mark.django_db
def test_around_the_march_dst_change_the_48h_reminder_fires_48_real_hours_before() -> None:
    # A3 due Mon Mar 9, 23:59 PDT (DST began Sun Mar 8, 02:00): 48 h earlier is Sat Mar 7,
    # 22:59 PST — an hour "earlier" on the wall clock than the deadline's 23:59.
    due = dt.datetime(2026, 3, 9, 23, 59, tzinfo=LA).astimezone(dt.UTC)
    course, _, _ = course_with_a_deadline(due, students=2)
    moment = dt.datetime(2026, 3, 7, 22, 59, tzinfo=LA)
    with time_machine.travel(moment - dt.timedelta(minutes=1), tick=False):
        assert reminders_send(course=course) == 0
    with time_machine.travel(moment, tick=False):
        assert reminders_send(course=course) == 2
    assert "Mon Mar 9, 2026, 11:59 PM PDT" in mail.outbox[0].subject


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_two_workers_running_the_task_at_once_send_each_email_once(
    celery_worker_process, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(reminder_hours=[48, 6])
    AssignmentFactory(
        course=course,
        code="A9",
        title="Soon",
        due_at=dt.datetime.now(dt.UTC) + dt.timedelta(hours=3),
    )
    for _ in range(30):
        member(course)
    env = {"TEST_EMAIL_DIR": str(tmp_path), "REMINDER_BATCH": "7"}  # 5 batches, 4 handed on
    celery_worker_process(concurrency=2, **env)
    celery_worker_process(concurrency=2, **env)
    results = [send_reminders.delay() for _ in range(6)]
    sent = [r.get(timeout=60) for r in results]
    assert sum(sent) == 30  # sent by the beat task or handed to another worker, once

    def subjects() -> list[str]:
        return [
            line
            for f in tmp_path.iterdir()
            for line in f.read_text().splitlines()
            if line.startswith("Subject:")
        ]

    deadline = time.monotonic() + 60
    while len(subjects()) < 30 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)  # nothing more arrives
    assert len(subjects()) == 30
    assert Reminder.objects.filter(course=course, sent_at__isnull=False).count() == 30
    assert all("A9 Soon" in s for s in subjects())


@pytest.mark.django_db
def test_later_batches_go_to_the_workers_and_a_batch_delivered_twice_sends_nothing_again(
    settings, celery_eager, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    settings.REMINDER_BATCH = 4
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, group = course_with_a_deadline(due, students=10)
    handed: list[reminders.Batch] = []
    real = reminders._hand_off

    def hand_off(messages: reminders.Batch) -> bool:
        handed.append(messages)
        return real(messages)  # eager: the "worker" runs it here

    monkeypatch.setattr(reminders, "_hand_off", hand_off)
    with time_machine.travel(due - dt.timedelta(hours=5), tick=False):
        assert reminders_send(course=course, spread=True) == 10
    assert len(handed) == 2  # batches 2 and 3 (4 + 4 + 2); the first was sent here
    assert sorted(m.to[0] for m in mail.outbox) == sorted(
        m.user.email for m in group.memberships.all()
    )
    assert all("Pre-Training" in m.subject for m in mail.outbox)
    assert Reminder.objects.filter(course=course, sent_at__isnull=True).count() == 0
    assert reminders.batch_send(handed[0]) == 0  # redelivered after its worker died
    assert len(mail.outbox) == 10


@pytest.mark.django_db
def test_with_the_queue_down_every_batch_is_sent_by_the_run_itself(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from redis.exceptions import ConnectionError as RedisDown

    settings.REMINDER_BATCH = 3
    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, _ = course_with_a_deadline(due, students=7)

    def down(*_args: object, **_kw: object) -> None:
        raise RedisDown("Connection refused")

    monkeypatch.setattr(reminders.task_named("calendar.send_reminder_batch"), "delay", down)
    with time_machine.travel(due - dt.timedelta(hours=5), tick=False):
        assert reminders_send(course=course, spread=True) == 7
    assert len(mail.outbox) == 7
    assert Reminder.objects.filter(course=course, sent_at__isnull=False).count() == 7


@pytest.mark.django_db
def test_a_refusing_smtp_server_leaves_the_batch_claimed_for_the_sweep_to_send(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from apps.calendar import jobs

    due = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)
    course, _, _ = course_with_a_deadline(due, students=4)

    def refuse(*_args: object, **_kw: object) -> int:
        raise OSError("SMTP server refused")

    monkeypatch.setattr(reminders.mailbulk, "send_copies", refuse)
    with time_machine.travel(due - dt.timedelta(hours=5), tick=False):
        assert reminders_send(course=course) == 0
        monkeypatch.undo()
        assert reminders_send(course=course) == 0  # claimed: the beat task never sends it twice
    assert mail.outbox == []
    waiting = Reminder.objects.filter(course=course, sent_at__isnull=True)
    assert [(r.attempts, r.last_error) for r in waiting] == [
        (1, "OSError: SMTP server refused")
    ] * 4
    with time_machine.travel(due - dt.timedelta(hours=5) + dt.timedelta(minutes=2), tick=False):
        jobs.sweep(dt.datetime.now(dt.UTC))
    assert len(mail.outbox) == 4
    assert not Reminder.objects.filter(course=course, sent_at__isnull=True).exists()
