from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import AuditEvent, Role
from apps.groups import services
from apps.groups.models import Group, GroupMembership
from tests.factories import CourseFactory, MilestoneFactory, group_of, member, open_course

pytestmark = pytest.mark.django_db


def size(group: Group) -> int:
    return group.memberships.filter(left_at__isnull=True).count()


def test_a_student_creates_a_group_and_a_classmate_joins_with_the_code() -> None:
    course = open_course()
    ada, bo = member(course), member(course)
    group = services.group_create(actor=ada, course=course, name="  Ring   Reduce ")
    assert group.name == "Ring Reduce"
    joined = services.group_join(actor=bo, course=course, code=group.join_code.lower())
    assert joined == group
    assert size(group) == 2
    assert list(AuditEvent.objects.values_list("action", flat=True).order_by("id")) == [
        "group.created",
        "group.joined",
    ]


def test_names_are_unique_ignoring_case() -> None:
    course = open_course()
    services.group_create(actor=member(course), course=course, name="KV Cache")
    with pytest.raises(Conflict, match="already a group called 'kv cache'"):
        services.group_create(actor=member(course), course=course, name="kv cache")


def test_a_full_group_refuses_the_next_student() -> None:
    course = open_course()
    group = group_of(course, 6)
    with pytest.raises(Conflict, match="is full \\(6 members\\)"):
        services.group_join(actor=member(course), course=course, code=group.join_code)


def test_one_group_per_student() -> None:
    course = open_course()
    a, b = group_of(course, 4), group_of(course, 4)
    student = a.memberships.first().user
    with pytest.raises(Conflict, match=f"You are in {a.name}; leave it"):
        services.group_join(actor=student, course=course, code=b.join_code)
    with pytest.raises(Conflict, match="already in a group"):
        services.group_create(actor=student, course=course, name="Another")


def test_a_wrong_code_says_so() -> None:
    course = open_course()
    with pytest.raises(DomainError, match="No group in this course has that join code"):
        services.group_join(actor=member(course), course=course, code="NOPE1234")


def test_a_code_from_another_course_does_not_work() -> None:
    course, other = open_course(), open_course()
    group = group_of(other, 2)
    with pytest.raises(DomainError, match="No group in this course"):
        services.group_join(actor=member(course), course=course, code=group.join_code)


def test_leaving_keeps_history_and_the_last_one_out_dissolves_the_group() -> None:
    course = open_course()
    ada, bo = member(course), member(course)
    group = services.group_create(actor=ada, course=course, name="Warp")
    services.group_join(actor=bo, course=course, code=group.join_code)
    services.group_leave(actor=bo, course=course)
    services.group_leave(actor=ada, course=course)
    group.refresh_from_db()
    assert group.dissolved_at is not None
    assert GroupMembership.objects.filter(group=group).count() == 2  # history kept
    assert all(m.left_at for m in GroupMembership.objects.filter(group=group))
    services.group_create(actor=ada, course=course, name="Warp")  # the name is free again


def test_rename_own_group_only() -> None:
    course = open_course()
    mine, theirs = group_of(course, 4, "Mine"), group_of(course, 4, "Theirs")
    me = mine.memberships.first().user
    assert services.group_rename(actor=me, group=mine, name="Ours").name == "Ours"
    with pytest.raises(NotAllowed, match="only rename your own group"):
        services.group_rename(actor=me, group=theirs, name="Stolen")
    with pytest.raises(Conflict):
        services.group_rename(actor=me, group=mine, name="theirs")


def test_after_the_deadline_students_are_told_to_ask_staff() -> None:
    course = CourseFactory()
    MilestoneFactory(
        course=course, key="group-formation", due_at=dt.datetime(2026, 1, 30, 7, 59, tzinfo=dt.UTC)
    )
    group = group_of(course, 4)
    newcomer = member(course)
    with time_machine.travel(dt.datetime(2026, 1, 29, 20, 0, tzinfo=dt.UTC)):
        services.group_join(actor=newcomer, course=course, code=group.join_code)  # still open
    with time_machine.travel(dt.datetime(2026, 1, 30, 8, 0, tzinfo=dt.UTC)):
        for action in (
            lambda: services.group_leave(actor=newcomer, course=course),
            lambda: services.group_create(actor=member(course), course=course, name="Late"),
            lambda: services.group_rename(actor=newcomer, group=group, name="Renamed"),
        ):
            with pytest.raises(
                NotAllowed,
                match="Groups were final at Thu Jan 29, 2026, 11:59 PM PST; ask the course staff",
            ):
                action()
        # staff still can
        ta = member(course, Role.TA)
        services.member_remove(actor=ta, course=course, user_id=newcomer.pk)
        assert size(group) == 4


def test_staff_cannot_use_student_actions_and_students_cannot_use_staff_actions() -> None:
    course = open_course()
    ta, student = member(course, Role.TA), member(course)
    group = group_of(course, 4)
    with pytest.raises(NotAllowed):
        services.group_join(actor=ta, course=course, code=group.join_code)
    with pytest.raises(NotAllowed):
        services.member_move(actor=student, course=course, user_id=student.pk, group_id=group.pk)
    with pytest.raises(NotAllowed):
        services.group_dissolve(actor=student, course=course, group_id=group.pk)


def test_staff_move_a_student_between_groups_with_history() -> None:
    course = open_course()
    a, b = group_of(course, 5, "A"), group_of(course, 4, "B")
    ta = member(course, Role.TA)
    student = a.memberships.first().user
    services.member_move(actor=ta, course=course, user_id=student.pk, group_id=b.pk)
    assert (size(a), size(b)) == (4, 5)
    assert GroupMembership.objects.filter(user=student).count() == 2
    event = AuditEvent.objects.get(action="group.member_moved")
    assert event.before == {"group": "A"} and event.after["group"] == "B"  # noqa: PT018
    with pytest.raises(Conflict, match="already in B"):
        services.member_move(actor=ta, course=course, user_id=student.pk, group_id=b.pk)


def test_staff_cannot_overfill_a_group() -> None:
    course = open_course()
    full, other = group_of(course, 6), group_of(course, 4)
    ta = member(course, Role.TA)
    with pytest.raises(Conflict, match="is full"):
        services.member_move(
            actor=ta, course=course, user_id=other.memberships.first().user_id, group_id=full.pk
        )
    with pytest.raises(Conflict, match=r"would make .* 10 strong"):
        services.group_merge(actor=ta, course=course, source_id=other.pk, target_id=full.pk)
    assert (size(full), size(other)) == (6, 4)  # nothing half-done


def test_merge_moves_everyone_and_dissolves_the_source() -> None:
    course = open_course()
    small, other = group_of(course, 2, "Small"), group_of(course, 3, "Other")
    ta = member(course, Role.TA)
    services.group_merge(actor=ta, course=course, source_id=small.pk, target_id=other.pk)
    small.refresh_from_db()
    assert size(other) == 5
    assert small.dissolved_at is not None


def test_dissolve_releases_every_member() -> None:
    course = open_course()
    group = group_of(course, 4)
    n = services.group_dissolve(
        actor=member(course, Role.INSTRUCTOR), course=course, group_id=group.pk
    )
    assert n == 4
    assert size(group) == 0
    group.refresh_from_db()
    assert group.dissolved_at is not None
    assert timezone.now() - group.dissolved_at < dt.timedelta(minutes=1)


def test_staff_only_move_active_students_of_the_course() -> None:
    course, other = open_course(), open_course()
    group = group_of(course, 2)
    with pytest.raises(DomainError, match="not an active student of this course"):
        services.member_move(
            actor=member(course, Role.TA),
            course=course,
            user_id=member(other).pk,
            group_id=group.pk,
        )
