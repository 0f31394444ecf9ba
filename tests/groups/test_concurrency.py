"""Concurrent joins on PostgreSQL with real threads: the group never exceeds its maximum."""

from __future__ import annotations

import pytest

from apps.core.errors import Conflict
from apps.groups import services
from tests.factories import group_of, member, open_course
from tests.threads import run_at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def slow_size_check(monkeypatch):  # type: ignore[no-untyped-def]
    """Widen the gap between counting members and inserting one (a slow request), so a missing
    lock shows up every time instead of once in a while."""
    import time

    from apps.groups import rules

    original = rules.can_join

    def slow(**kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.05)
        return original(**kwargs)

    monkeypatch.setattr(rules, "can_join", slow)


@pytest.mark.usefixtures("slow_size_check")
def test_seven_students_join_a_five_person_group_at_once_exactly_one_gets_in() -> None:
    course = open_course()
    group = group_of(course, 5)
    students = [member(course) for _ in range(7)]
    results = run_at_once(
        [
            lambda s=s: services.group_join(actor=s, course=course, code=group.join_code)
            for s in students
        ]
    )
    wins = [r for r in results if not isinstance(r, Exception)]
    losses = [r for r in results if isinstance(r, Conflict)]
    assert len(wins) == 1
    assert len(losses) == 6
    assert all("is full" in r.message for r in losses)
    assert group.memberships.filter(left_at__isnull=True).count() == 6


def test_one_student_joining_two_groups_at_once_ends_in_one() -> None:
    course = open_course()
    a, b = group_of(course, 3), group_of(course, 3)
    student = member(course)
    results = run_at_once(
        [
            lambda: services.group_join(actor=student, course=course, code=a.join_code),
            lambda: services.group_join(actor=student, course=course, code=b.join_code),
        ]
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert student.group_memberships.filter(left_at__isnull=True).count() == 1
