"""Slack days' invariants for `check_course`: a balance is derived from the ledger; a moved
deadline is never earlier than its base."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import F, Sum
from django.db.models.functions import Coalesce

from apps.calendar.models import Assignment
from apps.core.models import Course
from apps.slackdays import rules
from apps.slackdays.models import ActiveSpend, DeadlineException, SlackAccount


def ledger_balances(course_id: int) -> list[str]:
    """Every account's balance equals its allowance plus the sum of its ledger, and stays
    within 0 … allowance (the latter is also a CHECK constraint)."""
    accounts = (
        SlackAccount.objects.filter(course_id=course_id)
        .annotate(total=Coalesce(Sum("entries__delta"), 0))
        .exclude(balance=F("allowance") + F("total"))
        .select_related("student")
    )
    return [
        f"{a.student.email}: balance {a.balance}, but allowance {a.allowance} + ledger "
        f"{a.total:+d} = {a.allowance + a.total}"
        for a in accounts
    ]


def effective_not_before_base(course_id: int) -> list[str]:
    """Every deadline a student has moved (slack spent, an accommodation, an extension) is, by
    the same rule the pages use, no earlier than the assignment's base deadline, and no
    assignment carries more slack days than the course allows on one."""
    course = Course.objects.get(pk=course_id)
    assignments = {a.pk: a for a in Assignment.objects.filter(course_id=course_id)}
    spent: dict[tuple[int, int], int] = defaultdict(int)
    for student_id, assignment_id in ActiveSpend.objects.filter(
        account__course_id=course_id
    ).values_list("account__student_id", "assignment_id"):
        spent[(student_id, assignment_id)] += 1
    hours: dict[tuple[int, int], int] = defaultdict(int)
    live = DeadlineException.objects.filter(course_id=course_id, revoked_at__isnull=True)
    for student_id, assignment_id, h in live.filter(
        kind="extension", student__isnull=False
    ).values_list("student_id", "assignment_id", "hours"):
        hours[(student_id, assignment_id)] += h
    out = []
    limit = course.slack_days_max_per_assignment
    emails = dict(
        Course.objects.filter(pk=course_id).values_list(
            "memberships__user_id", "memberships__user__email"
        )
    )
    for (student_id, assignment_id), days in sorted(spent.items()):
        a = assignments[assignment_id]
        if days > limit:
            who = emails.get(student_id, f"student {student_id}")
            out.append(f"{who}: {days} slack day(s) on {a.code} (at most {limit})")
    for key in sorted(set(spent) | set(hours)):
        a = assignments[key[1]]
        moved = rules.effective_deadline(
            a.due_at, tz=course.timezone, extension_hours=hours[key], slack_days=spent[key]
        )
        if moved < a.due_at:
            who = emails.get(key[0], f"student {key[0]}")
            out.append(f"{who}: {a.code} due {moved.isoformat()}, before its base")
    return out
