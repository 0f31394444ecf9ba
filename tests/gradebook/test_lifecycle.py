"""What a student earned with a group stays theirs when the group changes: group entries are
carried to the members who leave, and milestone records count for the group a student was in
when the milestone was due."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from apps.core.invariants import run_checks
from apps.core.models import AuditEvent, User
from apps.gradebook import selectors, services, sources
from apps.groups.models import Group, GroupMembership
from apps.groups.services import group_dissolve, group_merge, member_move, member_remove
from apps.milestones.models import GroupMilestone
from tests.factories import CourseFactory, MilestoneFactory, group_of

pytestmark = pytest.mark.django_db


def _members(group: Group) -> list[User]:
    return [m.user for m in group.memberships.filter(left_at__isnull=True).select_related("user")]


def _group_score(course, actor, group: Group, percent: str) -> None:  # type: ignore[no-untyped-def]
    services.scores_apply(
        actor=actor,
        course=course,
        changes=[
            services.score_change(
                course=course,
                component_key="assignments-enhancements",
                percent=percent,
                group_id=group.pk,
            )
        ],
    )


def _technical(course, users: list[User]) -> dict[int, tuple[float | None, str]]:  # type: ignore[no-untyped-def]
    rows = selectors.gradebook_rows(course, student_ids=[u.pk for u in users])
    return {
        r.student.pk: (
            r.cells["assignments-enhancements"].percent,
            r.cells["assignments-enhancements"].origin,
        )
        for r in rows
    }


def test_dissolving_a_group_leaves_each_member_the_score_they_earned(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    group = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name").first()
    members = _members(group)
    _group_score(course, staff, group, "85")
    assert {p for p, _ in _technical(course, members).values()} == {85}
    client = Client()
    client.force_login(staff)
    confirm = client.get(f"/c/{course.code}/groups/{group.pk}/dissolve/").content.decode()
    assert "gradebook entries (assignments-enhancements) become each member" in confirm
    group_dissolve(actor=staff, course=course, group_id=group.pk)
    after = _technical(course, members)
    assert set(after.values()) == {(85, "student entry")}
    carried = AuditEvent.objects.get(action="gradebook.carried", course=course)
    assert carried.after["event"] == "GroupDissolved"
    assert sorted(carried.after["students"]) == sorted(u.pk for u in members)
    assert run_checks(course.pk) == []


def test_a_merge_carries_the_sources_score_and_leaves_the_targets_members_alone(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    live = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    source, target = live[0], live[1]
    # make room: the merged group must fit the course's maximum
    for extra in _members(source)[2:] + _members(target)[3:]:
        member_remove(actor=staff, course=course, user_id=extra.pk)
    _group_score(course, staff, source, "70")
    _group_score(course, staff, target, "95")
    moving, staying = _members(source), _members(target)
    group_merge(actor=staff, course=course, source_id=source.pk, target_id=target.pk)
    scores = _technical(course, moving + staying)
    assert {scores[u.pk] for u in moving} == {(70, "student entry")}
    assert {scores[u.pk] for u in staying} == {(95, "group entry")}


def test_a_moved_student_keeps_the_score_of_the_group_they_left(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    live = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    first, second = live[0], live[1]
    _group_score(course, staff, first, "60")
    mover = _members(first)[0]
    member_move(actor=staff, course=course, user_id=mover.pk, group_id=second.pk)
    assert _technical(course, [mover])[mover.pk] == (60, "student entry")


def test_milestones_count_for_the_group_a_student_was_in_when_they_were_due() -> None:
    course = CourseFactory()
    old, new = group_of(course, 4, "Old"), group_of(course, 4, "New")
    student = old.memberships.first().user
    now = timezone.now()
    first = MilestoneFactory(course=course, due_at=now - dt.timedelta(days=5))
    second = MilestoneFactory(course=course, due_at=now - dt.timedelta(hours=12))
    GroupMembership.objects.filter(group__in=[old, new]).update(
        joined_at=now - dt.timedelta(days=30)
    )
    GroupMilestone.objects.create(
        course=course, milestone=first, group=old, submitted_at=now - dt.timedelta(days=6)
    )
    GroupMilestone.objects.create(
        course=course, milestone=second, group=new, submitted_at=now - dt.timedelta(days=1)
    )
    # the student moved from Old to New two days ago: each milestone counts where they were
    GroupMembership.objects.filter(group=old, user=student).update(
        left_at=now - dt.timedelta(days=2)
    )
    GroupMembership.objects.create(
        group=new, course=course, user=student, joined_at=now - dt.timedelta(days=2)
    )
    got = sources.milestones(course, [student.pk], {student.pk: new.pk})[student.pk]
    assert got.percent == pytest.approx(100)
    assert got.detail == "2 of 2 due milestones recorded"
    stayed = old.memberships.filter(left_at__isnull=True).first().user_id
    assert sources.milestones(course, [stayed], {stayed: old.pk})[stayed].percent == 50
