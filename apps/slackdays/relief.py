"""The deadline's whole relief, asked by every write that gives more time.

Extension requests (apps.extensions), slack spends, staff grants and accommodations call
`relief_lock` and then `relief_judge` before they write, so the course's one rule
(`rules.relief_stack`, the course file's `policy.relief`) is applied to the whole relief on the
deadline — slack, own and group extensions, counted accommodations — never to one request.

Locking: the group's row (when the relief is a group's), then every affected student's
`SlackAccount` in student order. A slack spend locks the same accounts in the same order, so
concurrent requests by every member of a group, and a spend beside them, serialise and each sees
the relief the others wrote; the cap cannot be passed by racing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from apps.calendar.models import Assignment
from apps.core.models import Course, User
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.groups.models import Group, GroupMembership
from apps.slackdays import rules
from apps.slackdays.ledger import lock_accounts, reverse_spends
from apps.slackdays.models import ActiveSpend, DeadlineException, LedgerEntry
from apps.slackdays.selectors import assignment_stacks, relief_policy, student_slack_full


def relief_members(course: Course, group: Group | None, student: User | None) -> list[User]:
    """Who a relief reaches: the group's current members, or the one student."""
    if group is None:
        return [student] if student else []
    rows = GroupMembership.objects.filter(
        course=course, group=group, left_at__isnull=True
    ).select_related("user")
    return sorted((m.user for m in rows), key=lambda u: u.pk) or ([student] if student else [])


def relief_lock(course: Course, *, group: Group | None, students: list[User]) -> None:
    """Lock the group's row, then the students' slack accounts in student order (opening any
    that is missing), in the caller's transaction."""
    if group is not None:
        Group.objects.select_for_update().filter(pk=group.pk).first()
    lock_accounts(course, students)


def deadline_stack(course: Course, assignment: Assignment, student: User) -> rules.ReliefStack:
    """One student's relief on one assignment, read now (the pages' own computation)."""
    for d in student_slack_full(course=course, student=student)[2]:
        if d.assignment.pk == assignment.pk:
            return d.stack
    return rules.relief_stack(
        assignment.due_at, tz=course.timezone, policy=relief_policy(course), parts=[]
    )


def deadline_stacks(
    course: Course,
    assignment: Assignment,
    students: list[User],
    group: Group | None = None,
    spends_here: dict[int, int] | None = None,
) -> dict[int, rules.ReliefStack]:
    """`deadline_stack` for many students in 2–3 queries, whatever their number (`group`: the
    current group of them all, when the caller knows it; `spends_here`: their live slack days
    on the assignment, when the caller read them with their locked accounts)."""
    if group is not None:
        groups: dict[int, int | None] = {s.pk: group.pk for s in students}
    else:
        found = dict(
            GroupMembership.objects.filter(
                course=course, user__in=students, left_at__isnull=True
            ).values_list("user_id", "group_id")
        )
        groups = {s.pk: found.get(s.pk) for s in students}
    return assignment_stacks(
        course=course, assignment=assignment, groups=groups, spends_here=spends_here
    )


@dataclass(frozen=True)
class Judgement:
    stacks: dict[int, rules.ReliefStack]
    refusal: str | None  # the arithmetic, when the added relief would pass the cap
    confirm_days: int  # the total staff confirm when they grant past the cap

    @property
    def note(self) -> str:
        return self.refusal or "; ".join(
            sorted({rules.stack_text(s) for s in self.stacks.values()})
        )


def relief_judge(
    course: Course,
    assignment: Assignment,
    students: list[User],
    *,
    adding_hours: int,
    kind: str,
    group: Group | None = None,
    spends_here: dict[int, int] | None = None,
) -> Judgement:
    """Would `adding_hours` more relief of `kind` ("slack", "extension", "accommodation") on
    this assignment keep every one of these students within the cap? An extension in a course
    where extensions refund slack is judged without the slack it will give back."""
    policy = relief_policy(course)
    stacks = deadline_stacks(course, assignment, students, group, spends_here)
    refusal, confirm = None, 0
    counted = kind != "accommodation" or policy.accommodations_count
    for s in students:
        stack = stacks[s.pk]
        judged = stack
        if kind == "extension" and policy.slack_with_extension == "refund":
            judged = rules.relief_stack(
                stack.base,
                tz=stack.tz,
                policy=policy,
                parts=[p for p in stack.parts if p.kind != "slack"],
            )
        why = rules.relief_refusal(
            judged, code=assignment.code, adding_hours=adding_hours, counted=counted
        )
        if why and refusal is None:
            who = f" (for {s.get_full_name() or s.email})" if len(students) > 1 else ""
            refusal = why.replace(" already", f"{who} already", 1) if who else why
        total = judged.counted_hours + (adding_hours if counted else 0)
        confirm = max(confirm, -(-total // 24))
    return Judgement(stacks=stacks, refusal=refusal, confirm_days=confirm)


@in_callers_transaction
def refund_slack_for_extension(
    course: Course, assignment: Assignment, students: list[User], *, actor: User, label: str
) -> list[LedgerEntry]:
    """In a course whose extensions refund slack: give back every slack day these students
    have on the assignment, each ledger row naming the extension (accounts already locked)."""
    if relief_policy(course).slack_with_extension != "refund":
        return []
    spends = list(
        LedgerEntry.objects.filter(
            pk__in=ActiveSpend.objects.filter(
                account__course=course,
                account__student__in=students,
                assignment=assignment,
            ).values("entry_id")
        ).select_related("account__student", "assignment", "group")
    )
    if not spends:
        return []
    reason = f"refunded: {label} on {assignment.code} replaces the slack day (course rule)"
    out = reverse_spends(course, spends, kind="refund", actor=actor, reason=reason)
    audit_record(
        actor=actor,
        action="slack.refunded",
        course=course,
        obj=assignment,
        after={"students": [e.account.student.email for e in out], "reason": reason},
    )
    return out


def has_extension(
    course: Course, assignment: Assignment, student: User, group_id: int | None
) -> bool:
    who = Q(student=student) | (Q(group_id=group_id) if group_id else Q(pk__in=[]))
    return (
        DeadlineException.objects.filter(
            who, course=course, assignment=assignment, kind="extension", revoked_at__isnull=True
        )
        .order_by()
        .exists()
    )


@in_callers_transaction
def record_override(
    course: Course, *, actor: User, target: object, judgement: Judgement, what: str
) -> None:
    """The audit row of a grant past the cap: what staff confirmed, and the arithmetic."""
    audit_record(
        actor=actor,
        action="relief.cap_overridden",
        course=course,
        obj=target,  # type: ignore[arg-type]
        before={"refusal": judgement.refusal},
        after={"confirmed_days": judgement.confirm_days, "what": what},
    )
