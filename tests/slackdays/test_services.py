from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.db.models import Sum
from django.utils import timezone

from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from apps.slackdays.models import ActiveSpend, LedgerEntry, SlackAccount
from apps.slackdays.rules import effective_deadline
from apps.slackdays.services import (
    deadline_without_slack,
    exception_grant,
    slack_adjust,
    slack_apply,
    slack_cancel,
    slack_refund,
)
from tests.factories import AssignmentFactory, CourseFactory, group_of, member
from tests.threads import run_at_once

pytestmark = pytest.mark.django_db


def balance(course, user) -> int:  # type: ignore[no-untyped-def]
    """A student with no account yet has the full allowance."""
    account = SlackAccount.objects.filter(course=course, student=user).first()
    return account.balance if account else course.slack_days_allowance


def test_a_group_spend_charges_every_member_and_cancel_restores_everyone() -> None:
    course = CourseFactory()
    a1 = AssignmentFactory(course=course)
    group = group_of(course, 4)
    members = [m.user for m in group.memberships.all()]
    entries = slack_apply(actor=members[0], course=course, assignment_id=a1.pk)
    assert len(entries) == 4
    assert all(balance(course, u) == 2 for u in members)
    assert {e.batch for e in entries} == {entries[0].batch}
    slack_cancel(actor=members[2], course=course, assignment_id=a1.pk)  # any member can cancel
    assert all(balance(course, u) == 3 for u in members)
    assert LedgerEntry.objects.filter(kind="cancel").count() == 4
    assert ActiveSpend.objects.count() == 0


def test_if_one_member_is_out_nothing_is_charged_and_the_message_names_them() -> None:
    course = CourseFactory()
    assignments = [AssignmentFactory(course=course) for _ in range(4)]
    group = group_of(course, 3)
    members = [m.user for m in group.memberships.order_by("user__id")]
    members[1].full_name = "Bo Broke"
    members[1].save()
    staff = member(course, Role.INSTRUCTOR)
    slack_adjust(
        actor=staff, course=course, student_id=members[1].pk, delta=-3, reason="used elsewhere"
    )
    with pytest.raises(Conflict, match="Nothing was charged: Bo Broke has no slack days left"):
        slack_apply(actor=members[0], course=course, assignment_id=assignments[0].pk)
    assert balance(course, members[0]) == 3
    assert balance(course, members[2]) == 3


def test_at_most_one_per_assignment_and_three_in_all() -> None:
    course = CourseFactory()
    assignments = [AssignmentFactory(course=course) for _ in range(4)]
    student = member(course)
    slack_apply(actor=student, course=course, assignment_id=assignments[0].pk)
    with pytest.raises(Conflict, match="already used 1 on this assignment"):
        slack_apply(actor=student, course=course, assignment_id=assignments[0].pk)
    slack_apply(actor=student, course=course, assignment_id=assignments[1].pk)
    slack_apply(actor=student, course=course, assignment_id=assignments[2].pk)
    with pytest.raises(Conflict, match="has no slack days left"):
        slack_apply(actor=student, course=course, assignment_id=assignments[3].pk)
    account = SlackAccount.objects.get(student=student)
    assert account.balance == 0
    assert (
        account.entries.aggregate(s=Sum("delta"))["s"] == account.balance - account.allowance
    )  # derived, no drift


def test_cancel_only_before_the_original_deadline_staff_refund_after() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course, due_at=timezone.now() + dt.timedelta(hours=2))
    student, staff = member(course), member(course, Role.TA)
    slack_apply(actor=student, course=course, assignment_id=a.pk)
    with time_machine.travel(timezone.now() + dt.timedelta(hours=3)):
        with pytest.raises(Conflict, match=r"original deadline .* has passed"):
            slack_cancel(actor=student, course=course, assignment_id=a.pk)
        with pytest.raises(DomainError, match="reason"):
            slack_refund(
                actor=staff, course=course, student_id=student.pk, assignment_id=a.pk, reason=" "
            )
        slack_refund(
            actor=staff, course=course, student_id=student.pk, assignment_id=a.pk, reason="illness"
        )
    assert balance(course, student) == 3


def test_applying_after_the_extended_deadline_passed_is_refused() -> None:
    course = CourseFactory()
    a = AssignmentFactory(
        course=course,
        due_at=timezone.now() - dt.timedelta(days=2),
        release_at=timezone.now() - dt.timedelta(days=9),
    )
    with pytest.raises(Conflict, match="which has passed"):
        slack_apply(actor=member(course), course=course, assignment_id=a.pk)


def test_adjustments_stay_within_zero_and_the_allowance() -> None:
    course = CourseFactory()
    staff, student = member(course, Role.INSTRUCTOR), member(course)
    with pytest.raises(Conflict, match="must stay between 0 and 3"):
        slack_adjust(actor=staff, course=course, student_id=student.pk, delta=1, reason="bonus")
    slack_adjust(actor=staff, course=course, student_id=student.pk, delta=-2, reason="correction")
    assert balance(course, student) == 1
    with pytest.raises(NotAllowed):
        slack_adjust(actor=student, course=course, student_id=student.pk, delta=1, reason="me")


def test_ledger_entries_cannot_be_edited() -> None:
    from django.core.exceptions import ValidationError

    course = CourseFactory()
    e = slack_apply(
        actor=member(course), course=course, assignment_id=AssignmentFactory(course=course).pk
    )[0]
    e.reason = "rewritten"
    with pytest.raises(ValidationError, match="append-only"):
        e.save()


def test_exceptions_move_with_the_base_deadline_and_never_consume_slack(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Moving A3 by a day moves every A3 extension and slack-extended deadline with it."""
    from apps.calendar.models import Assignment
    from apps.core.models import User

    course = ee290_demo
    a3 = Assignment.objects.get(course=course, code="A3")
    ada = User.objects.get(email="student01@example.edu")
    staff = User.objects.get(email="instructor@example.edu")
    exception_grant(
        actor=staff,
        course=course,
        kind="extension",
        hours=36,
        reason="hardware failure",
        assignment_id=a3.pk,
        student_ids=[ada.pk],
    )
    exception_grant(
        actor=staff,
        course=course,
        kind="accommodation",
        hours=12,
        reason="DSP letter",
        student_ids=[ada.pk],
    )
    before = deadline_without_slack(course, a3, ada)
    assert before == a3.due_at + dt.timedelta(hours=48)
    assert balance(course, ada) == 3  # exceptions never consume slack
    a3.due_at += dt.timedelta(days=1)
    a3.save()
    after = deadline_without_slack(course, a3, ada)
    assert after - before == dt.timedelta(days=1)
    assert (
        effective_deadline(
            a3.due_at, tz=course.timezone, extension_hours=36, accommodation_hours=12, slack_days=1
        )
        > after
    )


def test_group_extension_applies_to_every_member() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course)
    group = group_of(course, 4)
    staff = member(course, Role.TA)
    exception_grant(
        actor=staff,
        course=course,
        kind="extension",
        hours=24,
        reason="node outage",
        assignment_id=a.pk,
        group_id=group.pk,
    )
    for m in group.memberships.all():
        assert deadline_without_slack(course, a, m.user) == a.due_at + dt.timedelta(hours=24)
    with pytest.raises(DomainError, match="reason"):
        exception_grant(
            actor=staff,
            course=course,
            kind="extension",
            hours=24,
            reason="",
            assignment_id=a.pk,
            group_id=group.pk,
        )
    with pytest.raises(NotAllowed):
        exception_grant(
            actor=group.memberships.first().user,
            course=course,
            kind="accommodation",
            hours=5,
            reason="x",
            student_ids=[],
        )


def test_the_cap_counts_a_groups_extension_and_the_days_it_already_spent() -> None:
    """The cap counts the group's extension (read by the group's id) and the days the group has
    already spent on the deadline (read with the locked accounts): the third day is refused with
    the arithmetic and charges no one, though every member still has a day left."""
    course = CourseFactory(relief_cap_days=3, slack_days_max_per_assignment=3)
    a = AssignmentFactory(course=course, code="A2")
    group = group_of(course, 4)
    members = [m.user for m in group.memberships.order_by("user_id")]
    other = group_of(course, 4).memberships.first().user
    staff = member(course, Role.TA)
    exception_grant(
        actor=staff,
        course=course,
        kind="extension",
        hours=24,
        reason="node outage",
        assignment_id=a.pk,
        group_id=group.pk,
    )
    exception_grant(  # another group's: not this group's relief
        actor=staff,
        course=course,
        kind="extension",
        hours=48,
        reason="illness",
        assignment_id=a.pk,
        student_ids=[other.pk],
    )
    slack_apply(actor=members[0], course=course, assignment_id=a.pk)
    slack_apply(actor=members[1], course=course, assignment_id=a.pk)  # 24 h + 2 days: the cap
    with pytest.raises(
        Conflict,
        match=r"A2 \(for .+\) already has \+1 day \(slack\), \+1 day \(slack\) and \+1 day \(group extension",
    ):
        slack_apply(actor=members[2], course=course, assignment_id=a.pk)
    assert [balance(course, u) for u in members] == [1, 1, 1, 1]
    assert slack_apply(actor=other, course=course, assignment_id=a.pk)  # 48 h + 1 day fits


# ------------------------------------------------------------ concurrency on PostgreSQL


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_simultaneous_spends_over_five_assignments_exactly_three_succeed() -> None:
    course = CourseFactory()
    assignments = [AssignmentFactory(course=course) for _ in range(5)]
    student = member(course)
    results = run_at_once(
        [
            lambda a=a: slack_apply(actor=student, course=course, assignment_id=a.pk)
            for a in assignments
            for _ in range(4)
        ]
    )
    wins = [r for r in results if isinstance(r, list)]
    assert len(wins) == 3
    assert all(isinstance(r, Conflict) for r in results if not isinstance(r, list))
    account = SlackAccount.objects.get(student=student)
    assert account.balance == 0
    assert ActiveSpend.objects.filter(account=account).count() == 3
    assert len({s.assignment_id for s in ActiveSpend.objects.filter(account=account)}) == 3
    assert list(account.entries.values_list("seq", flat=True)) == [1, 2, 3]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_ten_simultaneous_spends_on_one_assignment_exactly_one_succeeds() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course)
    group = group_of(course, 5)
    members = [m.user for m in group.memberships.all()]
    results = run_at_once(
        [
            lambda u=members[i % 5]: slack_apply(actor=u, course=course, assignment_id=a.pk)
            for i in range(10)
        ]
    )
    assert sum(isinstance(r, list) for r in results) == 1
    assert all(balance(course, u) == 2 for u in members)  # each member charged exactly once


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_double_submitting_the_form_spends_one_day() -> None:
    from django.test import Client

    course = CourseFactory()
    a = AssignmentFactory(course=course)
    student = member(course)

    def post() -> int:
        c = Client()
        c.force_login(student)
        return c.post(f"/c/{course.code}/slack/apply/", {"assignment": a.pk}).status_code

    results = run_at_once([post, post])
    assert all(r == 302 for r in results)
    assert balance(course, student) == 2


@pytest.mark.parametrize("size", [3, 6])
def test_a_group_spend_runs_a_fixed_handful_of_statements_whatever_the_group_size(
    size: int,
) -> None:
    """Bulk writes inside the same locks: under 15 statements, the same for 3 members as for 6
    (the deadline-hour write spike is 200 groups at once)."""
    from django.test.utils import CaptureQueriesContext

    course = CourseFactory()
    a = AssignmentFactory(course=course)
    group = group_of(course, size)
    student = group.memberships.first().user  # type: ignore[union-attr]
    with CaptureQueriesContext(connection) as ctx:
        entries = slack_apply(actor=student, course=course, assignment_id=a.pk)
    assert len(entries) == size
    statements = [
        q["sql"] for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
    ]
    assert len(statements) < 15, "\n".join(statements)
    assert (
        sorted(SlackAccount.objects.filter(course=course).values_list("balance", flat=True))
        == [2] * size
    )
