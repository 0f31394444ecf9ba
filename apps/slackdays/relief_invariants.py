"""The relief rule's invariants for `check_course` (registered in apps.py, run by the stateful
test): no deadline, as every page shows it, beyond its cap unless a staff override says so;
no slack counted on a deadline without its live spend row; group relief equal for every
current member."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db.models import F, Q

from apps.calendar.models import Assignment
from apps.core.models import Course, Membership, Role
from apps.groups.models import GroupMembership
from apps.slackdays import rules
from apps.slackdays.models import ActiveSpend, DeadlineException
from apps.slackdays.selectors import students_slack


def _students(course_id: int) -> dict[int, str]:
    return dict(
        Membership.objects.filter(course_id=course_id, role=Role.STUDENT).values_list(
            "user_id", "user__email"
        )
    )


def deadlines_within_cap(course_id: int) -> list[str]:
    """Every student's effective deadline (the one pages, feeds and reminders use) is within
    base + uncounted accommodation + the cap, computed here from the rows themselves, unless a
    live exception reaching that deadline carries staff's confirmation of a larger total."""
    course = Course.objects.get(pk=course_id)
    if course.relief_cap_days is None:
        return []
    emails = _students(course_id)
    groups = dict(
        GroupMembership.objects.filter(course_id=course_id, left_at__isnull=True).values_list(
            "user_id", "group_id"
        )
    )
    confirmed: dict[tuple[int, int | None], int] = defaultdict(int)  # (student, assignment)
    acc_hours: dict[int, int] = defaultdict(int)
    live = DeadlineException.objects.filter(course_id=course_id, revoked_at__isnull=True)
    for e in live:
        reach = (
            [e.student_id] if e.student_id else [u for u, g in groups.items() if g == e.group_id]
        )
        for uid in reach:
            if e.kind == "accommodation":
                acc_hours[uid] += e.hours
            if e.cap_days_confirmed:
                key = (uid, e.assignment_id)
                confirmed[key] = max(confirmed[key], e.cap_days_confirmed)
    out = []
    assignments = {a.pk: a for a in Assignment.objects.filter(course_id=course_id)}
    for uid, (_, rows) in students_slack(course=course, student_ids=list(emails)).items():
        uncounted = 0 if course.relief_accommodations_count else acc_hours[uid]
        for d in rows:
            a = assignments[d.assignment.pk]
            cap = max(course.relief_cap_days, confirmed[(uid, a.pk)], confirmed[(uid, None)])
            limit = rules.add_calendar_days(
                a.due_at + dt.timedelta(hours=uncounted), cap, course.timezone
            )
            if d.effective > limit:
                out.append(
                    f"{emails[uid]}: {a.code} due {d.effective.isoformat()}, past its cap of "
                    f"{cap} days ({limit.isoformat()}) with no staff override"
                )
    return out


def slack_counted_from_live_spends(course_id: int) -> list[str]:
    """Every slack day a deadline counts is a live spend: its ledger row is a spend of that
    student's account on that assignment, not yet cancelled or refunded."""
    bad = (
        ActiveSpend.objects.filter(account__course_id=course_id)
        .filter(
            Q(entry__reversed_by__isnull=False)
            | ~Q(entry__kind="spend")
            | ~Q(entry__account_id=F("account_id"))
            | ~Q(entry__assignment_id=F("assignment_id"))
        )
        .select_related("account__student", "assignment")
    )
    return [
        f"{s.account.student.email}: a slack day on {s.assignment.code} without its live spend "
        "in the ledger"
        for s in bad
    ]


def group_relief_equal(course_id: int) -> list[str]:
    """Every current member of a group has the same group relief on every assignment (the
    group's extensions count for each of them, once)."""
    course = Course.objects.get(pk=course_id)
    groups = dict(
        GroupMembership.objects.filter(course_id=course_id, left_at__isnull=True).values_list(
            "user_id", "group_id"
        )
    )
    if not groups:
        return []
    seen: dict[tuple[int, int], set[int]] = defaultdict(set)
    for uid, (_, rows) in students_slack(course=course, student_ids=list(groups)).items():
        for d in rows:
            hours = sum(p.hours for p in d.stack.parts if p.kind.startswith("group "))
            seen[(groups[uid], d.assignment.pk)].add(hours)
    return [
        f"group {gid}: members have different group relief on assignment {aid}: {sorted(h)} h"
        for (gid, aid), h in sorted(seen.items())
        if len(h) > 1
    ]
