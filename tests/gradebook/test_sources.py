"""What the gradebook reads from the apps that already know a score: the autograder's complete
passes and the milestones a group recorded."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.autograder.models import Grade, GradingPass, GradingRun, Question, QuestionSet
from apps.core.models import Course
from apps.gradebook import sources
from apps.milestones.models import GroupMilestone
from tests.factories import AssignmentFactory, CourseFactory, MilestoneFactory, group_of

pytestmark = pytest.mark.django_db


def _graded_set(
    course: Course, code: str, scores: dict[int, tuple[float, float]], released: bool = True
) -> QuestionSet:
    qs = QuestionSet.objects.create(
        course=course,
        key=f"set-{code.lower()}",
        title=code,
        assignment=AssignmentFactory(course=course, code=code),
        released_at=timezone.now() - dt.timedelta(minutes=1) if released else None,
    )
    q = Question.objects.create(question_set=qs, key="q1", position=1, kind="numeric", prompt="?")
    run = GradingRun.objects.create(question_set=qs, key_version="k")
    done = GradingPass.objects.create(run=run, number=1, status="done")
    run.current_pass = done
    run.save()
    Grade.objects.bulk_create(
        Grade(grading_pass=done, student_id=s, question=q, score=got, max_points=of)
        for s, (got, of) in scores.items()
    )
    return qs


def test_autograder_means_the_graded_assignment_sets() -> None:
    course = CourseFactory()
    g = group_of(course, 4)
    a, b = [m.user_id for m in g.memberships.all()][:2]
    _graded_set(course, "A1", {a: (8, 10), b: (5, 10)})
    _graded_set(course, "A2", {a: (10, 10)})  # b was not graded in A2: it does not count as 0
    got = sources.autograder(course, None, {})
    assert got[a].percent == pytest.approx(90)
    assert got[a].detail == "mean of A1 80 %, A2 100 %"
    assert got[b].percent == pytest.approx(50)
    # a pass that is not complete yet is not read
    qs = QuestionSet.objects.create(
        course=course,
        key="set-a3",
        title="A3",
        assignment=AssignmentFactory(course=course, code="A3"),
    )
    GradingRun.objects.create(question_set=qs, key_version="k")
    assert sources.autograder(course, [a], {})[a].percent == pytest.approx(90)


def test_a_graded_set_counts_only_once_its_results_are_released() -> None:
    course = CourseFactory()
    g = group_of(course, 4)
    a, b = [m.user_id for m in g.memberships.all()][:2]
    _graded_set(course, "A1", {a: (8, 10), b: (9, 10)})
    a4 = _graded_set(course, "A4", {a: (0, 10)}, released=False)  # "Grade now", not released
    before = sources.autograder(course, None, {})
    assert before[a].percent == pytest.approx(80)
    assert before[a].detail == "mean of A1 80 %"
    a4.released_at = timezone.now() + dt.timedelta(days=2)  # released later: still not counted
    a4.save()
    assert sources.autograder(course, None, {})[a].percent == pytest.approx(80)
    a4.released_at = timezone.now() - dt.timedelta(seconds=1)
    a4.save()
    assert sources.autograder(course, None, {})[a].percent == pytest.approx(40)


def test_milestones_on_time_late_excused_missing() -> None:
    course = CourseFactory()
    g = group_of(course, 4)
    student = g.memberships.first().user_id
    past = timezone.now() - dt.timedelta(days=3)
    on_time, late, excused, _missing = (
        MilestoneFactory(course=course, due_at=past) for _ in range(4)
    )
    MilestoneFactory(
        course=course, due_at=timezone.now() + dt.timedelta(days=3)
    )  # not due yet: not counted
    GroupMilestone.objects.create(
        course=course, milestone=on_time, group=g, submitted_at=past - dt.timedelta(hours=1)
    )
    GroupMilestone.objects.create(
        course=course, milestone=late, group=g, submitted_at=past + dt.timedelta(hours=5)
    )
    GroupMilestone.objects.create(course=course, milestone=excused, group=g, excused=True)
    got = sources.milestones(course, None, {student: g.pk})[student]
    assert got.percent == pytest.approx((100 + 50 + 100 + 0) / 4)
    assert got.detail == "3 of 4 due milestones recorded"


def test_a_composed_assignment_reads_its_own_autograded_part_and_checkoff() -> None:
    """An assignment's score = its autograded numbers + a hands-on part staff enter + its oral
    checkoff: 'autograder:A1' reads A1's sets only."""
    from apps.gradebook.selectors import blended
    from apps.gradebook.sources import blend_help, source_for

    course = CourseFactory()
    g = group_of(course, 4)
    a = g.memberships.first().user_id
    _graded_set(course, "A1", {a: (8, 10)})
    _graded_set(course, "A2", {a: (2, 10)})
    mine = source_for("autograder:A1")(course, None, {})
    assert mine[a].percent == pytest.approx(80)  # A2's 20 % is not in A1's score
    assert source_for("autograder")(course, None, {})[a].percent == pytest.approx(50)
    assert source_for("nope:A1") is None
    blend = {"autograder:A1": 60, "manual": 20, "checkoffs:A1": 20}
    cell = blended(blend, (100.0, ""), {"autograder:A1": mine, "checkoffs:A1": {}}, a)
    assert cell.percent is None
    assert cell.detail == (
        "A1 autograded 80 × 60 % (mean of A1 80 %) + staff 100 × 20 %; waiting for: A1 checkoffs"
    )
    assert blend_help(blend) == "blend: A1 autograded 60 %, staff 20 %, A1 checkoffs 20 %"


def test_a_student_who_moves_on_keeps_the_impact_score_given_to_their_group() -> None:
    from apps.core.models import Role
    from apps.groups.services import member_move
    from apps.impact.services import group_score
    from tests.factories import member

    course = CourseFactory()
    kv, other = group_of(course, 4, "KV Cache"), group_of(course, 4, "Other")
    staff = member(course, Role.INSTRUCTOR)
    mover = kv.memberships.order_by("pk").first().user_id
    stayer = kv.memberships.order_by("pk").last().user_id
    group_score(actor=staff, course=course, group_id=kv.pk, percent=90)
    member_move(actor=staff, course=course, user_id=mover, group_id=other.pk)
    got = sources.impact(course, None, {mover: other.pk, stayer: kv.pk})
    assert got[mover].percent == pytest.approx(90)  # was empty: read from the current group
    assert got[mover].detail == "KV Cache's impact score, given while a member"
    assert got[stayer].percent == pytest.approx(90)
    assert got[stayer].detail == "the group's impact score"
    # The new group scored later, while the mover is in it: that later score is theirs.
    group_score(actor=staff, course=course, group_id=other.pk, percent=70)
    again = sources.impact(course, None, {mover: other.pk, stayer: kv.pk})
    assert again[mover].percent == pytest.approx(70)
    assert again[stayer].percent == pytest.approx(90)


def _checkoff(course: Course, code: str, group, starts_at: dt.datetime, outcome: str):  # type: ignore[no-untyped-def]
    from apps.checkoffs.models import Booking, CheckoffSet, CheckoffSlot

    assignment = AssignmentFactory(course=course, code=code)
    s = CheckoffSet.objects.create(
        course=course,
        kind="assignment",
        title=f"{code} checkoff",
        assignment=assignment,
        published_at=starts_at - dt.timedelta(days=7),
    )
    slot = CheckoffSlot.objects.create(
        set=s,
        starts_at=starts_at,
        ends_at=starts_at + dt.timedelta(minutes=15),
        location="521 Cory Hall",
        capacity=1,
        booked=1,
    )
    return Booking.objects.create(
        set=s, slot=slot, group=group, attendance="present", outcome=outcome
    )


def test_a_checkoff_passed_counts_for_those_in_the_group_at_its_slot() -> None:
    """The group passed its A1 checkoff, then one member moved: the mover keeps the pass (it is
    not read from their new group), and the A2 checkoff the old group failed afterwards is not
    theirs."""
    from apps.core.models import Role
    from apps.groups.models import GroupMembership
    from apps.groups.services import member_move
    from tests.factories import member

    course = CourseFactory()
    kv, other = group_of(course, 4, "KV Cache"), group_of(course, 4, "Other")
    staff = member(course, Role.INSTRUCTOR)
    GroupMembership.objects.filter(course=course).update(  # formed last week
        joined_at=timezone.now() - dt.timedelta(days=7)
    )
    mover = kv.memberships.order_by("pk").first().user_id
    stayer = kv.memberships.order_by("pk").last().user_id
    _checkoff(course, "A1", kv, timezone.now() - dt.timedelta(hours=3), "passed")
    member_move(actor=staff, course=course, user_id=mover, group_id=other.pk)
    _checkoff(course, "A2", kv, timezone.now() - dt.timedelta(minutes=30), "failed")
    got = sources.checkoffs(course, None, {mover: other.pk, stayer: kv.pk})
    assert (got[mover].percent, got[mover].detail) == (50, "passed 1 of 2 checkoffs")
    assert (got[stayer].percent, got[stayer].detail) == (50, "passed 1 of 2 checkoffs")
    newcomer = other.memberships.order_by("pk").first().user_id
    assert sources.checkoffs(course, [newcomer], {newcomer: other.pk})[newcomer].percent == 0


def test_core_working_shows_the_checkoff_a_ta_passed(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """The shipped course file grades Core / working as the syllabus does: autograded part,
    written part (staff) and oral checkoff. A pass reaches the student's cell; until a checkoff
    is held the score is the other two so far, and says the checkoffs are to come."""
    from django.test import Client

    from apps.core.models import User
    from apps.gradebook.selectors import gradebook_rows
    from apps.gradebook.services import score_change, scores_apply
    from apps.groups.models import GroupMembership

    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    student = User.objects.get(email="student01@example.edu")
    group = GroupMembership.objects.get(course=course, user=student, left_at__isnull=True).group
    scores_apply(
        actor=ta,
        course=course,
        changes=[
            score_change(
                course=course, component_key="assignments-core", percent="80", group_id=group.pk
            )
        ],
    )
    before = gradebook_rows(course, student_ids=[student.pk])[0].cells["assignments-core"]
    assert "checkoffs" in before.to_come
    page = Client()
    page.force_login(student)
    mine = page.get(f"/c/{course.code}/gradebook/").content.decode()
    assert "So far; still to come: " in mine
    assert "checkoffs: 1 checkoff(s) not held yet" in mine
    _checkoff(course, "A6", group, timezone.now() - dt.timedelta(hours=1), "passed")
    cell = gradebook_rows(course, student_ids=[student.pk])[0].cells["assignments-core"]
    assert cell.percent is not None
    assert "checkoffs 100 × " in cell.detail
    assert "(passed 1 of 1 checkoffs)" in cell.detail
    assert "(passed 1 of 1 checkoffs)" in page.get(f"/c/{course.code}/gradebook/").content.decode()
    staff = Client()
    staff.force_login(User.objects.get(email="instructor@example.edu"))
    components = staff.get(f"/c/{course.code}/gradebook/components/").content.decode()
    assert "blend: autograded 50 %, staff 30 %, checkoffs 20 %" in components


def test_an_impact_score_given_after_a_student_left_is_not_theirs() -> None:
    from apps.core.models import Role
    from apps.groups.models import GroupMembership
    from apps.groups.services import member_move
    from apps.impact.services import group_score
    from tests.factories import member

    course = CourseFactory()
    kv, other = group_of(course, 4, "KV Cache"), group_of(course, 4, "Other")
    GroupMembership.objects.filter(course=course).update(
        joined_at=timezone.now() - dt.timedelta(days=7)
    )
    staff = member(course, Role.INSTRUCTOR)
    mover = kv.memberships.order_by("pk").first().user_id
    group_score(actor=staff, course=course, group_id=kv.pk, percent=90)
    member_move(actor=staff, course=course, user_id=mover, group_id=other.pk)
    group_score(actor=staff, course=course, group_id=kv.pk, percent=40)  # after they left
    got = sources.impact(course, [mover], {mover: other.pk})
    assert (got[mover].percent, got[mover].detail) == (
        90,
        "KV Cache's impact score, given while a member",
    )


def test_check_course_holds_the_impact_score_to_its_history() -> None:
    from apps.core.invariants import run_checks
    from apps.core.models import Role
    from apps.impact.models import GroupImpact
    from apps.impact.services import group_score
    from tests.factories import member

    course = CourseFactory()
    kv = group_of(course, 4, "KV Cache")
    staff = member(course, Role.INSTRUCTOR)
    group_score(actor=staff, course=course, group_id=kv.pk, percent=90)
    group_score(actor=staff, course=course, group_id=kv.pk, percent=None)
    group_score(actor=staff, course=course, group_id=kv.pk, percent=70)
    assert run_checks(course.pk) == []
    GroupImpact.objects.filter(group=kv).update(percent=50)  # changed around the service
    assert [v.detail for v in run_checks(course.pk)] == [
        "KV Cache: impact score 50.00 but its history last gave 70.00"
    ]
