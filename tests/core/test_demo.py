from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.core.models import Membership, Role, User
from apps.groups.models import Group, GroupMembership

pytestmark = pytest.mark.django_db


def test_demo_people_and_groups(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    roles = {r: Membership.objects.filter(course=ee290_demo, role=r).count() for r in Role}
    assert roles == {Role.INSTRUCTOR: 1, Role.TA: 2, Role.STUDENT: 40}
    sizes = sorted(g.memberships.filter(left_at__isnull=True).count() for g in Group.objects.all())
    assert sizes == [5] * 8
    assert User.objects.filter(is_demo=False).count() == 0
    student = User.objects.get(email="student01@example.edu")
    assert student.check_password("courseops-demo")


def test_running_the_demo_loader_again_changes_nothing(ee290_demo, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    before = (User.objects.count(), Group.objects.count(), GroupMembership.objects.count())
    out = StringIO()
    call_command("load_demo", "ee290-sp26", stdout=out)
    assert (User.objects.count(), Group.objects.count(), GroupMembership.objects.count()) == before
    assert "student01@example.edu" in out.getvalue()
    assert "courseops-demo" in out.getvalue()


def test_demo_accounts_are_refused_when_debug_is_off(ee290, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("load_demo", "ee290-sp26", stdout=StringIO())
    assert User.objects.count() == 0


def test_demo_needs_the_course_first(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    with pytest.raises(CommandError, match="run load_course"):
        call_command("load_demo", "nope", stdout=StringIO())


def test_no_migration_creates_people() -> None:
    # Demo people come only from the demo loader, never from migrations.
    assert User.objects.count() == 0


def test_make_run_starts_again_after_people_used_the_demo(ee290_demo, settings) -> None:  # type: ignore[no-untyped-def]
    """Rename a group, delete a sharing window, spend slack, leave a group; then the loader
    (what `make run` calls on every start) runs again without a fight or an error."""
    import datetime as dt

    from django.utils import timezone

    from apps.calendar.models import Assignment
    from apps.compute.board.windows import window_request
    from apps.compute.models import Allocation, SharingWindow
    from apps.slackdays.services import slack_apply

    settings.DEBUG = True
    renamed = Group.objects.get(course=ee290_demo, name="Pipeline Bubble")
    renamed.name = "Bubble Busters"
    renamed.save()
    member = renamed.memberships.filter(left_at__isnull=True).first().user  # type: ignore[union-attr]
    other = Allocation.objects.exclude(group=renamed).filter(ended_at__isnull=True).first()
    start = timezone.now() + dt.timedelta(days=1)
    window = window_request(
        actor=member,
        course=ee290_demo,
        node_ids=[other.node_id],  # type: ignore[union-attr]
        starts_at=start,
        ends_at=start + dt.timedelta(hours=2),
    )
    SharingWindow.objects.filter(pk=window.pk).delete()
    a = Assignment.objects.filter(course=ee290_demo).order_by("due_at").first()
    Assignment.objects.filter(pk=a.pk).update(due_at=timezone.now() + dt.timedelta(days=3))  # type: ignore[union-attr]
    slack_apply(actor=member, course=ee290_demo, assignment_id=a.pk)  # type: ignore[union-attr]
    leaver = GroupMembership.objects.filter(group=renamed, left_at__isnull=True).last()
    GroupMembership.objects.filter(pk=leaver.pk).update(left_at=timezone.now())  # type: ignore[union-attr]
    before = (Group.objects.count(), GroupMembership.objects.count(), Allocation.objects.count())

    call_command("load_demo", "ee290-sp26", stdout=StringIO())

    assert (
        Group.objects.count(),
        GroupMembership.objects.count(),
        Allocation.objects.count(),
    ) == before
    assert Group.objects.filter(name="Bubble Busters").exists()
    assert not Group.objects.filter(name="Pipeline Bubble").exists()


def test_allocate_all_skips_a_group_with_no_members(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.board.services import allocate_all
    from apps.compute.models import Allocation

    Group.objects.create(course=ee290_demo, name="Empty Shell")
    instructor = User.objects.get(email="instructor@example.edu")
    assert allocate_all(actor=instructor, course=ee290_demo) == []
    assert not Allocation.objects.filter(group__name="Empty Shell").exists()


def test_the_demo_term_is_live_on_any_day(ee290, settings) -> None:  # type: ignore[no-untyped-def]
    """`load_demo` moves the demo database's term so that today is in week 7: the first lecture
    six weeks ago, deadlines still 23:59 course time, one to come that student01 can spend a
    slack day on. `--keep-dates` (and `load_course` alone) keep the real Spring 2026 dates."""
    import datetime as dt

    from django.utils import timezone

    from apps.calendar.models import Assignment, Lecture
    from apps.slackdays.services import slack_apply

    settings.DEBUG = True
    real = list(Assignment.objects.filter(course=ee290).order_by("due_at"))
    out = StringIO()
    call_command("load_demo", "ee290-sp26", stdout=out)
    assert "so that today is in week 7" in out.getvalue()
    ee290.refresh_from_db()
    tz = ee290.tz
    today = timezone.localdate(timezone=tz)
    first = Lecture.objects.filter(course=ee290).order_by("starts_at")[0].starts_at.astimezone(tz)
    assert 35 < (today - first.date()).days < 49  # the Tuesday of week 1
    moved = list(Assignment.objects.filter(course=ee290).order_by("due_at"))
    for before, after in zip(real, moved, strict=True):
        assert after.due_at.astimezone(tz).time() == before.due_at.astimezone(tz).time()
        assert (
            after.due_at.astimezone(tz).date() - before.due_at.astimezone(tz).date()
        ).days % 7 == 0
    upcoming = [a for a in moved if a.due_at > timezone.now()]
    assert upcoming
    assert any(a.due_at < timezone.now() for a in moved)  # the early ones are past
    student = User.objects.get(email="student01@example.edu")
    entries = slack_apply(actor=student, course=ee290, assignment_id=upcoming[0].pk)
    assert entries
    assert "(demo dates)" in ee290.term
    call_command("load_demo", "ee290-sp26", stdout=StringIO())  # again: nothing moves further
    assert Assignment.objects.get(pk=moved[0].pk).due_at == moved[0].due_at
    assert dt.timedelta(0) <= timezone.now() - first < dt.timedelta(weeks=7)


def test_the_live_demo_term_has_done_what_a_seventh_week_has(ee290_live) -> None:  # type: ignore[no-untyped-def]
    """What a visitor finds on any day: slack spent on A1 and A2 by two groups and one late
    submission waiting for staff, scribe duties only on lectures to come (student01's next
    week), a review round open, the A1 numbers graded and released and the A4 set open."""
    import datetime as dt

    from django.utils import timezone

    from apps.autograder.models import Grade, QuestionSet
    from apps.peerreview.models import PeerAssignment, PeerRound
    from apps.scribing.models import ScribeDuty
    from apps.slackdays.models import LateWork, SlackAccount

    course = ee290_live
    now = timezone.now()
    spent = SlackAccount.objects.filter(course=course, balance=2).values_list(
        "student__email", flat=True
    )
    assert "student01@example.edu" in spent
    assert len(spent) == 10  # two groups of five, one day each
    late = LateWork.objects.get(course=course)
    assert (late.student.email, late.assignment.code, late.status) == (
        "student33@example.edu",
        "A2",
        "open",
    )
    duties = ScribeDuty.objects.filter(course=course).select_related("lecture")
    assert duties.count() == 80
    assert all(d.lecture.starts_at > now and d.due_at > now for d in duties)  # nobody late
    today = timezone.localdate(timezone=course.tz)
    monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=1)
    mine = [
        d.lecture.starts_at.astimezone(course.tz).date()
        for d in duties
        if d.student.email == "student01@example.edu"
    ]
    assert any(monday <= day < monday + dt.timedelta(weeks=1) for day in mine), mine
    r = PeerRound.objects.get(course=course)
    assert r.published_at
    assert r.due_at > now
    assert PeerAssignment.objects.filter(round=r).count() == 7  # Roofline has no draft: left out
    released = QuestionSet.objects.get(course=course, key="a1-numbers")
    assert released.released_at
    assert released.released_at <= now
    assert Grade.objects.filter(grading_pass__run__question_set=released).count() == 40 * 4
    assert QuestionSet.objects.get(course=course, key="a4-serving").released_at is None


def test_the_live_demo_has_written_answers_for_the_tas_rubric(ee290_live) -> None:  # type: ignore[no-untyped-def]
    """The 30 students who did Lab 09's first act also answered its bank's written question: the
    TA's page groups the identical ones and nothing is graded yet."""
    from django.test import Client

    from apps.core.models import User

    ta = Client()
    ta.force_login(User.objects.get(email="ta1@example.edu"))
    url = f"/c/{ee290_live.code}/questions/lab09-numbers/written/why-8pct/"
    page = ta.get(url).content.decode()
    assert "0 of 30 answers graded" in page
    sizes = [int(n) for n in re.findall(r"<strong>(\d+) answers?</strong>", page)]
    assert sum(sizes) == 30
    assert len(sizes) == 3  # four phrasings, two of them the same answer


def test_a_demo_moved_before_the_shift_was_recorded_reloads_without_a_fight(
    ee290, course_file_text
) -> None:  # type: ignore[no-untyped-def]
    """A `make run` database from before `calendar_shift_days`: its dates moved, its term marked,
    the shift not stored. Reloading the file finds the shift from the first lecture and keeps the
    demo's term instead of putting the real dates (and a second set of recess days) back."""
    from apps.calendar.models import Assignment, RecessDay
    from apps.core.coursefile import parse_course_file
    from apps.core.models import Course
    from apps.setup.course_loader import course_load
    from apps.setup.liveterm import move_term

    move_term(ee290, 38)
    Course.objects.filter(pk=ee290.pk).update(calendar_shift_days=0)  # as the old code left it
    dues = sorted(Assignment.objects.filter(course=ee290).values_list("due_at", flat=True))
    recess = sorted(RecessDay.objects.filter(course=ee290).values_list("date", flat=True))

    report = course_load(cf=parse_course_file(course_file_text))

    assert report.counts["course"]["updated"] == 1  # the shift, now recorded
    assert not any(c["updated"] or c["created"] for k, c in report.counts.items() if k != "course")
    assert sorted(Assignment.objects.filter(course=ee290).values_list("due_at", flat=True)) == dues
    assert sorted(RecessDay.objects.filter(course=ee290).values_list("date", flat=True)) == recess
    ee290.refresh_from_db()
    assert ee290.calendar_shift_days == 38 * 7
    assert ee290.term.endswith("(demo dates)")
