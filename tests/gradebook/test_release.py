"""Release is one rule: a TA's "Grade now" on a set whose results are not released changes no
student's gradebook — not the cells, totals, letter, at-risk or what-if — until staff release it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Q
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.autograder.models import GradingRun, QuestionSet
from apps.autograder.passes import release, run_create
from apps.core.models import Role, User
from apps.gradebook.services import score_change, scores_apply
from apps.groups.models import GroupMembership

pytestmark = pytest.mark.django_db


def _mine(user: User, code: str) -> tuple[Any, str]:
    api = APIClient()
    api.force_authenticate(user)
    me = api.get(f"/api/v1/courses/{code}/gradebook/me/").json()
    page = Client()
    page.force_login(user)
    html = page.get(f"/c/{code}/gradebook/").content.decode()
    return me, html


def test_grade_now_on_an_unreleased_set_changes_no_gradebook_until_release(  # type: ignore[no-untyped-def]
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    qs = (
        QuestionSet.objects.filter(course=course, assignment__isnull=False)
        .filter(Q(released_at__isnull=True) | Q(released_at__gt=timezone.now()))
        .order_by("key")
        .first()
    )
    assert qs is not None
    code = qs.assignment.code  # type: ignore[union-attr]
    students = list(
        User.objects.filter(memberships__course=course, memberships__role=Role.STUDENT).order_by(
            "pk"
        )[:4]
    )
    before = {s.pk: _mine(s, course.code)[0] for s in students}

    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=qs)  # "Grade now": every student graded, mostly 0
    assert GradingRun.objects.get(question_set=qs).current_pass_id is not None
    for s in students:
        me, html = _mine(s, course.code)
        assert me == before[s.pk], s.email
        assert f"{code} 0 %" not in html

    staff = Client()
    staff.force_login(ta)
    told = staff.get(f"/c/{course.code}/gradebook/").content.decode()
    assert "Graded, <strong>not released</strong>" in told
    assert f"{code} ({qs.title})" in told
    assert f"{code} 0 %" not in told
    # Staff can look ahead: the board as students will see it once the set is released.
    ahead = staff.get(f"/c/{course.code}/gradebook/?preview=release").content.decode()
    assert "Preview, as students will see it after release." in ahead
    assert f"{code} 0 %" in ahead
    for s in students:  # and the preview changed nothing for students
        assert _mine(s, course.code)[0] == before[s.pk], s.email

    release(actor=ta, question_set=qs)
    assert "not released" not in staff.get(f"/c/{course.code}/gradebook/").content.decode()
    after = {s.pk: _mine(s, course.code) for s in students}
    assert any(me != before[pk] for pk, (me, _) in after.items())
    assert any(f"{code} 0 %" in html for _, html in after.values())


def test_the_what_if_takes_a_component_with_assignments_to_come_as_unknown(  # type: ignore[no-untyped-def]
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    student = User.objects.get(email="student01@example.edu")
    sets = list(QuestionSet.objects.filter(course=course, assignment__isnull=False).order_by("key"))
    assert len({s.assignment_id for s in sets}) >= 2
    first = sets[0]
    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=first)
    release(actor=ta, question_set=first)
    group = GroupMembership.objects.get(course=course, user=student, left_at__isnull=True).group
    scores_apply(  # the written part of Core / working, as a TA enters it for the group
        actor=ta,
        course=course,
        changes=[
            score_change(
                course=course, component_key="assignments-core", percent="90", group_id=group.pk
            )
        ],
    )
    api = APIClient()
    api.force_authenticate(student)
    me = api.get(f"/api/v1/courses/{course.code}/gradebook/me/?target=A-").json()
    core = next(c for c in me["components"] if c["component"] == "assignments-core")
    assert core["percent"] is not None, core
    message = me["what_if"]["message"]
    assert "Counted as still to come: Core / working (" in message, message
    assert "assignments not released yet" in message
    assert "checkoffs: 1 checkoff(s) not held yet" in message
    page = Client()
    page.force_login(student)
    html = page.get(f"/c/{course.code}/gradebook/?target=A-").content.decode()
    assert "Counted as still to come: Core / working (" in html
