"""`manage.py check_course`: every app's invariants over a course, each violation named."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import call_command

from apps.core.invariants import checks
from apps.groups.models import Group
from apps.slackdays.models import SlackAccount
from apps.slackdays.services import slack_apply

pytestmark = pytest.mark.django_db


def run(code: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("check_course", code, stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_the_demo_course_keeps_every_invariant(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    status, out = run(ee290_demo.code)
    assert status == 0
    assert f"{len(checks())} checks, 0 violations" in out
    assert len(checks()) >= 5  # compute, checkoffs, peer review, slack days, scribing


def test_a_balance_that_drifted_from_its_ledger_is_named(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    from django.utils import timezone

    from apps.calendar.models import Assignment

    group = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")[0]
    student = group.memberships.filter(left_at__isnull=True).order_by("pk")[0].user
    future = Assignment.objects.filter(course=course, due_at__gt=timezone.now()).first()
    if future is None:  # the demo term is over: give the last assignment a future deadline
        future = Assignment.objects.filter(course=course).order_by("-due_at")[0]
        Assignment.objects.filter(pk=future.pk).update(due_at=timezone.now() + dt.timedelta(days=3))
    slack_apply(actor=student, course=course, assignment_id=future.pk)
    assert run(course.code)[0] == 0
    SlackAccount.objects.filter(course=course, student=student).update(balance=3)
    status, out = run(course.code)
    assert status == 1
    assert f"{student.email}: balance 3, but allowance 3 + ledger -1 = 2" in out


def test_an_unknown_course_is_a_clear_error() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No course with the code 'nope'"):
        call_command("check_course", "nope", stdout=io.StringIO())


def test_staff_see_the_checks_on_a_page_and_students_do_not(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client

    from apps.core.models import User

    staff, student = Client(), Client()
    staff.force_login(User.objects.get(email="instructor@example.edu"))
    student.force_login(User.objects.get(email="student01@example.edu"))
    page = staff.get(f"/c/{ee290_demo.code}/check/").content.decode()
    assert "0 violations" in page
    assert "no dissolved group holds a node, an IP or a live window" in page
    assert student.get(f"/c/{ee290_demo.code}/check/").status_code == 403


def test_check_course_names_slack_beyond_the_per_assignment_maximum(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Slack spent beyond what the course allows on one assignment is named (here: the
    maximum lowered to 0 after a student spent a day)."""
    from django.utils import timezone

    from apps.calendar.models import Assignment
    from apps.core.invariants import run_checks

    course = ee290_demo
    group = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")[0]
    student = group.memberships.filter(left_at__isnull=True).order_by("pk")[0].user
    last = Assignment.objects.filter(course=course).order_by("-due_at")[0]
    Assignment.objects.filter(pk=last.pk).update(due_at=timezone.now() + dt.timedelta(days=3))
    slack_apply(actor=student, course=course, assignment_id=last.pk)
    assert run_checks(course.pk) == []
    type(course).objects.filter(pk=course.pk).update(slack_days_max_per_assignment=0)
    found = [v.detail for v in run_checks(course.pk)]
    assert f"{student.email}: 1 slack day(s) on {last.code} (at most 0)" in found
