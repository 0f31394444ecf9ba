"""Reminders follow the one deadline (#67): the reminder source asks the relief rule for a
student's effective deadline, as the pages do, rather than adding slack and extensions itself.
A student whose slack day and extensions pass the cap (they joined a group that had its own
extension) is reminded for the deadline their pages show — held at the cap — not for the sum."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core import mail
from rest_framework.test import APIClient

from apps.calendar.reminders import reminders_due, reminders_send
from apps.core.models import Role
from apps.slackdays.moves import assignment_move_impact
from apps.slackdays.rules import add_calendar_days
from apps.slackdays.services import exception_grant, slack_apply
from tests.factories import (
    AssignmentFactory,
    CourseFactory,
    GroupMembershipFactory,
    group_of,
    member,
)

pytestmark = pytest.mark.django_db
DUE = dt.datetime(2026, 2, 25, 7, 59, tzinfo=dt.UTC)  # Tue Feb 24, 11:59 PM PST


def _effective_on_the_page(course, student, code: str) -> dt.datetime:  # type: ignore[no-untyped-def]
    api = APIClient()
    api.force_authenticate(student)
    me = api.get(f"/api/v1/courses/{course.code}/slack/me/").json()
    return dt.datetime.fromisoformat(
        next(d["effective"] for d in me["deadlines"] if d["assignment"] == code)
    )


def test_a_student_with_slack_and_extensions_is_reminded_for_the_effective_deadline() -> None:
    with time_machine.travel(DUE - dt.timedelta(days=10), tick=False):
        course = CourseFactory(
            reminder_hours=[48, 6], relief_cap_days=3, relief_slack_with_extension="stack"
        )
        a = AssignmentFactory(
            course=course, code="A2", due_at=DUE, release_at=DUE - dt.timedelta(days=14)
        )
        staff = member(course, Role.INSTRUCTOR)
        group = group_of(course, 2, name="Gamma")
        exception_grant(
            actor=staff,
            course=course,
            kind="extension",
            hours=48,
            reason="Their node was down.",
            assignment_id=a.pk,
            group_id=group.pk,
        )
        # Ada, alone, spends a slack day and gets a 2-day extension of her own: 3 days, the cap
        ada = member(course, full_name="Ada Lovelace")
        slack_apply(actor=ada, course=course, assignment_id=a.pk)
        exception_grant(
            actor=staff,
            course=course,
            kind="extension",
            hours=48,
            reason="Conference.",
            assignment_id=a.pk,
            student_ids=[ada.pk],
        )
        # ...then joins Gamma, whose 2 days come with it: 5 days of relief, held at the cap of 3
        GroupMembershipFactory(group=group, user=ada)
    capped = add_calendar_days(DUE, 3, course.timezone)
    summed = add_calendar_days(DUE + dt.timedelta(hours=96), 1, course.timezone)
    assert capped < summed
    assert _effective_on_the_page(course, ada, "A2") == capped
    gamma = [m.user for m in group.memberships.exclude(user=ada)]
    # the 6-hour reminder comes 6 hours before the deadline her pages show, not the sum's
    with time_machine.travel(capped - dt.timedelta(hours=5), tick=False):
        due = reminders_due(course=course, now=dt.datetime.now(dt.UTC))
        mine = [r for r in due if r.user_id == ada.pk]
        assert [(r.offset_hours, r.event.start) for r in mine] == [(6, capped)]
        assert reminders_send(course=course) >= 1
    sent = [m for m in mail.outbox if m.to == [ada.email]]
    assert len(sent) == 1
    assert "Fri Feb 27, 2026, 11:59 PM PST" in sent[0].subject
    # Gamma's others: their group's 2 days, reminded for that
    for u in gamma:
        assert _effective_on_the_page(course, u, "A2") == DUE + dt.timedelta(hours=48)
    with time_machine.travel(summed - dt.timedelta(hours=5), tick=False):
        late = reminders_due(course=course, now=dt.datetime.now(dt.UTC))
    assert [r for r in late if r.user_id == ada.pk] == []  # nothing for the sum's deadline


def test_moving_a_deadline_shows_each_student_the_deadline_the_rule_gives() -> None:
    """The impact of a move (the same computation as reminders) shows the effective deadline
    before and after, held at the cap as the pages hold it."""
    with time_machine.travel(DUE - dt.timedelta(days=10), tick=False):
        course = CourseFactory(relief_cap_days=2, relief_slack_with_extension="stack")
        a = AssignmentFactory(
            course=course, code="A2", due_at=DUE, release_at=DUE - dt.timedelta(days=14)
        )
        staff = member(course, Role.INSTRUCTOR)
        group = group_of(course, 2)
        exception_grant(
            actor=staff,
            course=course,
            kind="extension",
            hours=48,
            reason="x",
            assignment_id=a.pk,
            group_id=group.pk,
        )
        bo = member(course, full_name="Bo")
        slack_apply(actor=bo, course=course, assignment_id=a.pk)
        GroupMembershipFactory(group=group, user=bo)  # 1 slack day + 2 group days: cap 2
    impact = assignment_move_impact(course=course, assignment=a, new_due=DUE + dt.timedelta(days=1))
    moved = next(p for p in impact.people if p.user_id == bo.pk)
    assert moved.old == _effective_on_the_page(course, bo, "A2")
    assert moved.old == add_calendar_days(DUE, 2, course.timezone)
    assert moved.new == add_calendar_days(DUE + dt.timedelta(days=1), 2, course.timezone)
