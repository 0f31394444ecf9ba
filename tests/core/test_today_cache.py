"""Today's per-course sources (the lab windows, the unreleased question sets) are cached under
the course's version (#73): read from Redis on the next request, and every change a student
would notice — a deadline moved, a question added, a set released, a lab window or the whole
term moved — shows on the next Today."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.autograder.models import Question, QuestionSet
from apps.autograder.today import _unreleased_sets
from apps.core.models import Course, Role
from apps.core.tokens import token_create
from apps.labs.models import CourseLab
from apps.labs.today import _windows
from apps.setup.liveterm import move_term
from apps.slackdays.moves import assignment_update
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = [pytest.mark.redis, pytest.mark.django_db]
LAB = "lab09-perf-engr"


def _today(client: Client, course: Course) -> str:
    page = client.get(f"/c/{course.code}/").content.decode()
    return page[page.index('id="today"') : page.index('<div class="panels">')]


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def test_a_question_sets_line_follows_its_questions_its_deadline_and_its_release(
    redis_cache,
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    student = _login(member(course))
    a = AssignmentFactory(course=course, code="A1", due_at=timezone.now() + dt.timedelta(days=3))
    s = QuestionSet.objects.create(
        course=course, key="a1-numbers", title="A1 numbers", assignment=a
    )
    for i in (1, 2):
        Question.objects.create(question_set=s, key=f"q{i}", position=i, kind="numeric", prompt="?")
    assert "A1 numbers: 2 of 2 unanswered" in _today(student, course)
    again = Course.objects.get(pk=course.pk)
    with CaptureQueriesContext(connection) as ctx:
        assert [x.key for x in _unreleased_sets(again)] == ["a1-numbers"]
    assert not ctx.captured_queries  # from the cache

    Question.objects.create(question_set=s, key="q3", position=3, kind="numeric", prompt="?")
    assert "A1 numbers: 3 of 3 unanswered" in _today(student, course)
    # Staff move the deadline out of the week, then back into it.
    later = timezone.now() + dt.timedelta(days=10)
    assignment_update(actor=staff, course=course, assignment_id=a.pk, due_at=later, confirm=True)
    assert "A1 numbers" not in _today(student, course)
    soon = timezone.now() + dt.timedelta(days=2)
    assignment_update(actor=staff, course=course, assignment_id=a.pk, due_at=soon, confirm=True)
    assert "A1 numbers: 3 of 3 unanswered" in _today(student, course)
    s.released_at = timezone.now()
    s.save(update_fields=["released_at"])
    assert "A1 numbers" not in _today(student, course)
    Question.objects.filter(question_set=s).first().delete()  # type: ignore[union-attr]
    s.released_at = None
    s.save(update_fields=["released_at"])
    assert "A1 numbers: 2 of 2 unanswered" in _today(student, course)


def test_a_labs_line_follows_its_window_and_the_term_moved(redis_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    student = _login(member(course))
    now = timezone.now()
    w = CourseLab.objects.create(
        course=course,
        lab_key=LAB,
        opens_at=now - dt.timedelta(days=1),
        closes_at=now + dt.timedelta(days=3),
    )
    assert "0 of 4 steps done" in _today(student, course)
    with CaptureQueriesContext(connection) as ctx:
        assert [x.lab_key for x in _windows(Course.objects.get(pk=course.pk))] == [LAB]
    assert len(ctx.captured_queries) == 1  # the course; the windows from the cache
    w.closes_at = now + dt.timedelta(days=10)  # as the course file loaded again does
    w.save()
    assert "steps done" not in _today(student, course)
    w.closes_at = now + dt.timedelta(days=3)
    w.save()
    assert "0 of 4 steps done" in _today(student, course)
    move_term(course, 1)  # a bulk update of every window: a week later, out of this week
    assert "steps done" not in _today(student, course)


# A student's whole Today (its items and the deadlines panel) is kept per person until a table
# it reads is written (apps.core.todaycache).


def _queries(client: Client, course: Course) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as ctx:
        page = _today(client, course)
    return page, len(ctx.captured_queries)


def test_a_students_today_is_kept_until_their_group_spends_a_slack_day(redis_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1", due_at=timezone.now() + dt.timedelta(days=3))
    group = group_of(course, 2)
    ada, bo = (m.user for m in group.memberships.order_by("pk"))
    ada_page, bo_page = _login(ada), _login(bo)
    first, built = _queries(bo_page, course)
    assert "A1" in first
    assert "3 slack day(s) left" in first
    again, kept = _queries(bo_page, course)
    assert again == first
    assert kept <= built - 5  # the sources were not asked again

    # Ada spends a day for the group (one WITH … UPDATE … INSERT statement, no model signal):
    # Bo's next Today shows it, with no wait.
    r = ada_page.post(
        f"/api/v1/courses/{course.code}/slack/apply/",
        {"assignment": a.pk},
        content_type="application/json",
    )
    assert r.status_code == 201, r.content
    after = _today(bo_page, course)
    assert "1 slack day(s) spent on it; 2 slack day(s) left" in after


def test_a_write_around_the_models_and_a_bulk_copy_drop_it_too(redis_cache) -> None:  # type: ignore[no-untyped-def]
    from apps.core import bulk
    from apps.core.todaycache import version
    from apps.core.versions import version_of
    from apps.slackdays.models import SlackAccount

    course = CourseFactory()
    AssignmentFactory(course=course, code="A1", due_at=timezone.now() + dt.timedelta(days=3))
    student = member(course)
    SlackAccount.objects.create(course=course, student=student, allowance=3, balance=3)
    client = _login(student)
    assert "3 slack day(s) left" in _today(client, course)
    SlackAccount.objects.filter(course=course, student=student).update(balance=1)  # staff tool
    assert "1 slack day(s) left" in _today(client, course)

    before = version_of(version("slackdays"))
    with transaction.atomic():
        bulk.upsert(
            SlackAccount,
            ["course", "student", "allowance", "balance", "last_seq"],
            [(course.pk, student.pk, 3, 2, 0)],
            unique=["course", "student"],
            update=["balance"],
        )
    assert version_of(version("slackdays")) != before
    assert "2 slack day(s) left" in _today(client, course)


def test_a_write_elsewhere_keeps_it_and_the_minute_turning_rebuilds_it(redis_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1", due_at=timezone.now() + dt.timedelta(hours=30))
    client = _login(member(course))
    staff = member(course, Role.INSTRUCTOR)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        _, built = _queries(client, course)
        token_create(user=staff, name="laptop")  # a table nothing on a student's Today reads
        _, kept = _queries(client, course)
        assert kept <= built - 5
        clock.shift(dt.timedelta(seconds=61))
        _, rebuilt = _queries(client, course)
        assert rebuilt >= kept + 5  # the person's parts built again (the course's still kept)


def test_staff_today_is_never_kept(redis_cache) -> None:  # type: ignore[no-untyped-def]
    from apps.contributions.models import QuestionProposal

    course = CourseFactory()
    p = QuestionProposal.objects.create(
        course=course, proposer=member(course), kind="numeric", prompt="?", status="changes"
    )
    staff = _login(member(course, Role.INSTRUCTOR))
    assert "contributed question(s) to review" not in _today(staff, course)
    # A table no student Today reads, written in the same minute: staff see it at once.
    QuestionProposal.objects.filter(pk=p.pk).update(status="proposed")
    assert "1 contributed question(s) to review" in _today(staff, course)


def test_a_today_source_students_see_must_say_what_it_reads() -> None:
    from apps.core import registry
    from apps.core.checks import today_sources_say_what_they_read

    def nothing(*args: object) -> list[registry.TodayItem]:
        return []

    saved = list(registry._TODAY)
    try:
        registry.register_today(
            registry.TodaySource("t-silent", nothing, roles=frozenset({Role.STUDENT}))
        )
        registry.register_today(
            registry.TodaySource("t-typo", nothing, reads=("slackday", "core.Nope"))
        )
        registry.register_today(registry.TodaySource("t-staff", nothing, roles=registry.STAFF))
        errors = today_sources_say_what_they_read()
    finally:
        registry._TODAY[:] = saved
    assert [e.id for e in errors] == ["courseops.E007", "courseops.E007"]
    assert "'t-silent' does not say what it reads" in errors[0].msg
    assert "'t-typo' reads 'core.Nope', 'slackday': no installed app or model" in errors[1].msg
    assert today_sources_say_what_they_read() == []


@pytest.mark.django_db(transaction=True)
def test_every_transaction_drops_the_version_even_through_the_same_decorated_function(
    redis_cache,
) -> None:  # type: ignore[no-untyped-def]
    """`transaction.atomic` as a decorator reuses one block object for every call: each call is
    a transaction of its own all the same, and each write must drop what it changes."""
    from django.db.models import F

    from apps.core.todaycache import version
    from apps.core.versions import version_of
    from apps.slackdays.models import SlackAccount

    course = CourseFactory()
    student = member(course)
    SlackAccount.objects.create(course=course, student=student, allowance=3, balance=3)

    @transaction.atomic
    def spend() -> None:
        SlackAccount.objects.filter(student=student).update(balance=F("balance") - 1)

    seen = [version_of(version("slackdays"))]
    for _ in range(3):
        spend()
        seen.append(version_of(version("slackdays")))
    assert len(set(seen)) == 4, seen
