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


def test_the_latest_score_given_while_a_member_counts_through_moves(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Scored 60 with First, moved to Second (scored 95 before they came): 60 stays theirs.
    Second re-scored 75 while they are in it: 75. First re-scored 10 after they left: not theirs.
    Moved back to First: the 75 they carry from Second is newer than First's 10."""
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    live = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    first, second = live[0], live[1]
    _group_score(course, staff, first, "60")
    _group_score(course, staff, second, "95")
    mover = _members(first)[0]
    member_move(actor=staff, course=course, user_id=mover.pk, group_id=second.pk)
    assert _technical(course, [mover])[mover.pk] == (60, "student entry")
    _group_score(course, staff, second, "75")
    assert _technical(course, [mover])[mover.pk] == (75, "group entry")
    _group_score(course, staff, first, "10")
    assert _technical(course, [mover])[mover.pk] == (75, "group entry")
    member_remove(actor=staff, course=course, user_id=_members(first)[-1].pk)  # make room
    member_move(actor=staff, course=course, user_id=mover.pk, group_id=first.pk)
    assert _technical(course, [mover])[mover.pk] == (75, "student entry")
    assert run_checks(course.pk) == []
    # A score staff set for the student themselves is an override: no group's score replaces it.
    services.scores_apply(
        actor=staff,
        course=course,
        changes=[
            services.score_change(
                course=course,
                component_key="assignments-enhancements",
                percent="88",
                student_id=mover.pk,
            )
        ],
    )
    _group_score(course, staff, first, "20")
    assert _technical(course, [mover])[mover.pk] == (88, "student entry")


def test_check_course_names_a_leaver_who_lost_the_groups_score(ee290_demo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    live = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    _group_score(course, staff, live[0], "60")
    mover = _members(live[0])[0]
    from apps.gradebook import lifecycle

    monkeypatch.setattr(lifecycle, "carry_group_entries", lambda *a, **k: 0)  # reaction off
    member_move(actor=staff, course=course, user_id=mover.pk, group_id=live[1].pk)
    found = [v.detail for v in run_checks(course.pk)]
    assert found == [
        f"{mover.email} left {live[0].name} without its assignments-enhancements score, "
        "given while a member"
    ]


def test_check_course_names_a_score_that_counts_unreleased_results(ee290_demo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The invariant reads the released assignments itself: a source that counted an
    unreleased one (as the autograder source did before release was one rule) is named."""
    from apps.autograder.models import QuestionSet

    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    unreleased = (
        QuestionSet.objects.filter(course=course, assignment__isnull=False, released_at=None)
        .select_related("assignment")
        .first()
    )
    assert run_checks(course.pk) == []
    leaky = {student.pk: sources.Computed(0.0, "", counted=(unreleased.assignment.code,))}
    monkeypatch.setitem(sources.SOURCES, "autograder", lambda c, s, g: leaky)
    found = [v.detail for v in run_checks(course.pk)]
    assert found == [
        f"{student.email}: autograder counts {unreleased.assignment.code}, "
        "whose results are not released"
    ]
