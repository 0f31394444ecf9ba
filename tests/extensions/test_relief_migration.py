"""Today's data under the relief rule (#67, "0 on the demo after a migration of today's data"):
the database is taken back to before the change (extensions 0002, slackdays 0003), rows are
written as the old code wrote them — five members of a group each approved "2 days for my whole
group" (10 days, past the cap), a student's own approved request beside a slack day, two open
requests by one group on one deadline — and migrated forward. Then `check_course` finds nothing,
each approved request points at the extension it granted, the duplicate open request is closed
saying why, and every stack is what the rule computes (the group's 10 days held at the cap)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from apps.core.invariants import run_checks
from apps.core.models import Role
from apps.slackdays.rules import add_calendar_days
from apps.slackdays.services import slack_apply
from apps.slackdays.stacks import deadline_stack_rows
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
BEFORE = [
    ("extensions", "0002_document_in_the_database"),
    ("slackdays", "0003_alter_latework_options_alter_ledgerentry_options"),
]


def _migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection)


def _leaves() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def test_todays_requests_and_exceptions_migrate_to_zero_violations_and_the_right_stacks() -> None:
    course = CourseFactory(
        relief_cap_days=7,
        relief_slack_with_extension="stack",
        extension_auto_max_days=2,
        extension_auto_per_student=1,
    )
    a3 = AssignmentFactory(course=course, code="A3")
    staff = member(course, Role.INSTRUCTOR)
    group = group_of(course, 5, name="Delta")
    members = [m.user for m in group.memberships.order_by("user_id")]
    solo = member(course, full_name="Sol Alone")
    slack_apply(actor=solo, course=course, assignment_id=a3.pk)  # slack: unchanged tables
    leaves = _leaves()
    try:
        old = _migrate(BEFORE).loader.project_state(BEFORE).apps
        Request = old.get_model("extensions", "ExtensionRequest")
        Exception_ = old.get_model("slackdays", "DeadlineException")
        now = timezone.now()

        def approved(student_id: int, group_id: int | None) -> int:
            """An approval as the old code wrote it: the request, then an exception whose
            reason names it, no link between them."""
            r = Request.objects.create(
                course_id=course.pk,
                student_id=student_id,
                group_id=group_id,
                assignment_id=a3.pk,
                days=2,
                reason="Our node was down.",
                status="approved",
                approved_days=2,
                auto=True,
                decided_at=now,
            )
            Exception_.objects.create(
                course_id=course.pk,
                kind="extension",
                assignment_id=a3.pk,
                student_id=None if group_id else student_id,
                group_id=group_id,
                hours=48,
                reason=f"Extension request #{r.pk}: Our node was down.",
                granted_by_id=staff.pk,
            )
            return int(r.pk)

        group_requests = [approved(u.pk, group.pk) for u in members]  # 10 days for the group
        own = approved(solo.pk, None)
        first_open = Request.objects.create(
            course_id=course.pk,
            student_id=members[0].pk,
            group_id=group.pk,
            assignment_id=a3.pk,
            days=3,
            reason="More.",
        )
        second_open = Request.objects.create(
            course_id=course.pk,
            student_id=members[1].pk,
            group_id=group.pk,
            assignment_id=a3.pk,
            days=3,
            reason="More, again.",
        )
    finally:
        _migrate(leaves)

    from apps.extensions.models import ExtensionRequest

    assert run_checks(course.pk) == []
    for pk in [*group_requests, own]:
        r = ExtensionRequest.objects.get(pk=pk)
        assert r.exception is not None
        assert r.exception.reason.startswith(f"Extension request #{pk}:")
    assert ExtensionRequest.objects.get(pk=first_open.pk).status == "open"
    closed = ExtensionRequest.objects.get(pk=second_open.pk)
    assert closed.status == "closed"
    assert "already had an open request" in closed.comment
    rows = {r.student.pk: r for r in deadline_stack_rows(course=course, assignment=a3)}
    tz = course.timezone
    for u in members:  # 10 days of group relief: held at the cap of 7, and the page says so
        s = rows[u.pk].stack
        assert s.counted_hours == 240
        assert s.effective == add_calendar_days(a3.due_at, 7, tz)
        assert s.over_text == "3 days"
        assert rows[u.pk].over_course_cap
        assert rows[u.pk].override_days is None
    s = rows[solo.pk].stack  # a slack day and their own 2 days: 3 days, 4 left
    assert (s.slack_days, s.exception_hours, s.room_hours) == (1, 48, 96)
    assert s.effective == add_calendar_days(a3.due_at + dt.timedelta(hours=48), 1, tz)
    assert "+1 day (slack) and +2 days (extension, approved" in s.text
    over = deadline_stack_rows(course=course, assignment=a3, cap="over")
    assert sorted(r.student.pk for r in over) == sorted(u.pk for u in members)
