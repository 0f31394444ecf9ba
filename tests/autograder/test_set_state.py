"""Question sets say when and how: the student's own deadline in course time (slack days and
extensions applied), open / closed / not released yet / results released, answered N of M, and
the score once released — on the list and on the set's page."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.passes import release, run_create
from apps.autograder.services import answers_bulk_upsert, instance_for
from apps.core.models import Role, User
from apps.core.timefmt import format_instant
from apps.slackdays.services import exception_grant
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db
TZ = "America/Los_Angeles"


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def _row(page: str, title: str) -> str:
    """The text of the list's row for one set (tags stripped, spaces folded)."""
    row = next(r for r in page.split("<tr>") if title in r)
    return " ".join(re.sub(r"<[^>]+>", " ", row).split())


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a1 = AssignmentFactory(course=course, code="A1")
    numbers = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    numbers.assignment = a1
    numbers.save()
    return course, a1, numbers, member(course, Role.TA), member(course, email="ada@uni.edu")


def test_the_list_gives_each_student_their_own_deadline_state_and_progress(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, numbers, ta, ada = world
    url = f"/c/{course.code}/questions/"
    n = numbers.questions.count()
    row = _row(as_user(ada).get(url).content.decode(), numbers.title)
    assert format_instant(a1.due_at, TZ) in row
    assert "open" in row
    assert f"0 of {n} answered" in row
    assert "after release" in row

    q = numbers.questions.order_by("position").first()
    assert q is not None
    answers_bulk_upsert([(q, ada.pk, 0, "1")], "form")
    exception_grant(
        actor=ta,
        course=course,
        kind="extension",
        hours=48,
        reason="conference",
        assignment_id=a1.pk,
        student_ids=[ada.pk],
    )
    page = as_user(ada).get(url).content.decode()
    row = _row(page, numbers.title)
    moved = a1.due_at + dt.timedelta(hours=48)
    assert format_instant(moved, TZ) in row  # her deadline, not the base one
    assert f"base {format_instant(a1.due_at, TZ)}" in row
    assert f"1 of {n} answered" in row
    assert f"Times in {TZ}" in page
    staff_row = _row(as_user(ta).get(url).content.decode(), numbers.title)
    assert format_instant(a1.due_at, TZ) in staff_row  # staff read the base deadline
    assert format_instant(moved, TZ) not in staff_row

    set_page = as_user(ada).get(f"{url}{numbers.key}/").content.decode()
    assert "Due with" not in set_page
    assert format_instant(moved, TZ) in set_page
    assert f"1 of {n} answered" in set_page


def test_a_set_of_an_unreleased_assignment_says_so_and_when_it_opens(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, numbers, _ta, ada = world
    a1.release_at = timezone.now() + dt.timedelta(days=3)
    a1.due_at = timezone.now() + dt.timedelta(days=10)
    a1.save()
    row = _row(as_user(ada).get(f"/c/{course.code}/questions/").content.decode(), numbers.title)
    assert "not released yet" in row
    assert f"opens {format_instant(a1.release_at, TZ)}" in row
    assert format_instant(a1.due_at, TZ) in row


def test_after_the_deadline_the_set_is_closed_and_after_release_shows_the_score(
    world, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course, a1, numbers, ta, ada = world
    q = numbers.questions.get(key="allreduce")
    mine = instance_for(q, ada)
    as_user(ada).post(
        f"/c/{course.code}/questions/{numbers.key}/answers/",
        {"allreduce-0": f"{mine.keys[0] * 1000} ms"},
    )
    url = f"/c/{course.code}/questions/"
    with time_machine.travel(a1.due_at + dt.timedelta(hours=1)):
        row = _row(as_user(ada).get(url).content.decode(), numbers.title)
        assert "closed" in row
        with django_capture_on_commit_callbacks(execute=True):
            run_create(actor=ta, question_set=numbers)
        release(actor=ta, question_set=numbers)
        row = _row(as_user(ada).get(url).content.decode(), numbers.title)
    assert "results released" in row
    from apps.autograder.models import Grade

    grades = Grade.objects.filter(student=ada, grading_pass__run__question_set=numbers)
    score, most = re.search(r"([\d.,]+) / ([\d.,]+)", row.split("released", 1)[1]).groups()  # type: ignore[union-attr]
    assert float(score.replace(",", "")) == pytest.approx(sum(g.score for g in grades), abs=0.01)
    assert float(most.replace(",", "")) == pytest.approx(sum(g.max_points for g in grades))
    assert sum(g.score for g in grades) > 0  # her right answer counted
