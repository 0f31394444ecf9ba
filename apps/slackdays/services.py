"""Writes for slack days and exceptions.

Every ledger write locks the student's `SlackAccount` row (group spends lock all members'
accounts in id order, so they never deadlock), checks the rules, appends entries with the next
`seq` and the new balance, and writes an audit event. The database backs each rule: the balance
CHECK (0 … allowance), unique `(account, seq)`, and unique `ActiveSpend(account, assignment, slot)`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from apps.calendar.models import Assignment
from apps.core.compiled import compiled_query
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.lifecycle import StudentsEnrolled
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.groups.models import Group, GroupMembership
from apps.slackdays import rules
from apps.slackdays.ledger import _append, _ensure_accounts, _lock_accounts, _reverse
from apps.slackdays.models import (
    ActiveSpend,
    DeadlineException,
    LateWork,
    LedgerEntry,
    SlackAccount,
)


def on_students_enrolled(event: StudentsEnrolled) -> None:
    """Open each newly enrolled student's account with the course's allowance (existing accounts
    untouched), in the enrolment's transaction: the first spend then locks, never creates."""
    _ensure_accounts(event.course, [User(pk=pk) for pk in event.user_ids])


def _assignment_of(course_id: int, assignment_id: int) -> QuerySet[Assignment]:
    return Assignment.objects.filter(course_id=course_id, pk=assignment_id)


def _assignment(course: Course, assignment_id: int) -> Assignment:
    found = compiled_query("slack.assignment", _assignment_of, course.pk, int(assignment_id))
    if not found:
        raise NotFound("No such assignment in this course.")
    return found[0]


def _current_group(course: Course, user: User) -> Group | None:
    m = (
        GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True)
        .select_related("group")
        .first()
    )
    return m.group if m else None


def _hours(course_id: int, student_id: int) -> QuerySet[Any]:
    return DeadlineException.objects.filter(
        course_id=course_id, student_id=student_id, revoked_at__isnull=True
    ).values_list("kind", "assignment_id", "hours")


def _hours_with_group(course_id: int, student_id: int, group_id: int) -> QuerySet[Any]:
    return DeadlineException.objects.filter(
        Q(student_id=student_id) | Q(group_id=group_id),
        course_id=course_id,
        revoked_at__isnull=True,
    ).values_list("kind", "assignment_id", "hours")


def exception_hours(
    course: Course, assignment: Assignment, student: User, group: Group | None
) -> tuple[int, int]:
    """(one-off extension hours for the student or their group, accommodation hours)."""
    rows = (
        compiled_query(
            "slack.exception_hours.group", _hours_with_group, course.pk, student.pk, group.pk
        )
        if group is not None
        else compiled_query("slack.exception_hours", _hours, course.pk, student.pk)
    )
    ext = acc = 0
    for kind, on, hours in rows:
        if kind == "extension" and on == assignment.pk:
            ext += hours
        elif kind == "accommodation":
            acc += hours
    return ext, acc


def deadline_without_slack(
    course: Course, assignment: Assignment, student: User, *, group: Group | bool | None = True
) -> dt.datetime:
    """Base + exceptions for one student; pass `group` when the caller already has it."""
    if group is True:
        group = _current_group(course, student)
    ext, acc = exception_hours(
        course, assignment, student, group if isinstance(group, Group) else None
    )
    return rules.effective_deadline(
        assignment.due_at, tz=course.timezone, extension_hours=ext, accommodation_hours=acc
    )


def _spend_all(
    members: list[User],
    accounts: dict[int, SlackAccount],
    active: dict[int, int],
    *,
    assignment: Assignment,
    group: Group | None,
    actor: User,
    reason: str,
) -> list[LedgerEntry]:
    """One day from each (locked) account: balances and sequence numbers, ledger entries, spend
    slots — one statement on PostgreSQL (`_spend_all_sql`), three elsewhere. The CHECK and
    unique constraints hold it as `_append` would."""
    batch = uuid.uuid4()
    if connection.vendor == "postgresql":
        return _spend_all_sql(
            members,
            accounts,
            active,
            assignment=assignment,
            group=group,
            actor=actor,
            reason=reason[:300],
            batch=batch,
        )
    changed = []
    for s in members:
        a = accounts[s.pk]
        a.balance -= 1
        a.last_seq += 1
        changed.append(a)
    # Every locked account moves by the same step: one plain UPDATE (bulk_update's CASE per row
    # cost the request more Python than the rest of the spend).
    SlackAccount.objects.filter(pk__in=[a.pk for a in changed]).update(
        balance=F("balance") - 1, last_seq=F("last_seq") + 1
    )
    entries = LedgerEntry.objects.bulk_create(
        [
            LedgerEntry(
                account=a,
                seq=a.last_seq,
                kind="spend",
                delta=-1,
                balance_after=a.balance,
                assignment=assignment,
                group=group,
                batch=batch,
                actor=actor,
                reason=reason[:300],
            )
            for a in changed
        ]
    )
    ActiveSpend.objects.bulk_create(
        [
            ActiveSpend(account=a, assignment=assignment, slot=active[a.student_id] + 1, entry=e)
            for a, e in zip(changed, entries, strict=True)
        ]
    )
    return entries


def _spend_all_sql(
    members: list[User],
    accounts: dict[int, SlackAccount],
    active: dict[int, int],
    *,
    assignment: Assignment,
    group: Group | None,
    actor: User,
    reason: str,
    batch: uuid.UUID,
) -> list[LedgerEntry]:
    """`_spend_all` in one round trip (the write spike of the deadline hour is round trips):
    the UPDATE of the accounts, the INSERT of their ledger entries and the INSERT of their spend
    slots as data-modifying CTEs of one statement, returning the entries."""
    now = timezone.now()
    ids = [accounts[s.pk].pk for s in members]
    slots = [active[s.pk] + 1 for s in members]
    account_t, ledger_t, spend_t = (
        connection.ops.quote_name(m._meta.db_table)
        for m in (SlackAccount, LedgerEntry, ActiveSpend)
    )
    sql = (
        f"WITH moved AS (UPDATE {account_t} SET balance = balance - 1, last_seq = last_seq + 1 "  # noqa: S608 - table names from the models; every value a parameter
        "WHERE id = ANY(%s) RETURNING id, balance, last_seq), "
        f"entries AS (INSERT INTO {ledger_t} (account_id, seq, kind, delta, balance_after, "
        "assignment_id, group_id, batch, reverses_id, actor_id, reason, created_at) "
        "SELECT id, last_seq, 'spend', -1, balance, %s, %s, %s, NULL, %s, %s, %s FROM moved "
        "RETURNING id, account_id, seq, balance_after), "
        f"slots AS (INSERT INTO {spend_t} (account_id, assignment_id, slot, entry_id) "
        "SELECT e.account_id, %s, s.slot, e.id FROM entries e JOIN "
        "unnest(%s::bigint[], %s::int[]) AS s(account_id, slot) ON s.account_id = e.account_id) "
        "SELECT id, account_id, seq, balance_after FROM entries"
    )
    params: list[Any] = [ids, assignment.pk, group.pk if group else None, batch, actor.pk, reason]
    params.append(now)
    params += [assignment.pk, ids, slots]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = {account_id: (pk, seq, after) for pk, account_id, seq, after in cursor.fetchall()}
    entries = []
    for s in members:
        a = accounts[s.pk]
        pk, seq, after = rows[a.pk]
        a.balance, a.last_seq = after, seq
        e = LedgerEntry(
            pk=pk,
            account=a,
            seq=seq,
            kind="spend",
            delta=-1,
            balance_after=after,
            assignment=assignment,
            group=group,
            batch=batch,
            actor=actor,
            reason=reason,
            created_at=now,
        )
        e._state.adding = False
        entries.append(e)
    return entries


def _group_of(course_id: int, user_id: int) -> QuerySet[GroupMembership]:
    return GroupMembership.objects.filter(
        course_id=course_id,
        left_at__isnull=True,
        group__memberships__user_id=user_id,
        group__memberships__left_at__isnull=True,
    ).select_related("user", "group")


def slack_apply(
    *,
    actor: User,
    course: Course,
    assignment_id: int,
    charged_by: User | None = None,
    reason: str = "",
) -> list[LedgerEntry]:
    """Spend one slack day on an assignment for the actor's whole group, all or nothing.

    Refuses (nothing charged) when any current member is out of days or already at the
    per-assignment maximum, naming them, or when the extended deadline has already passed.
    `charged_by` is the staff member or import applying it on the student's behalf."""
    if not is_student(actor, course):
        raise NotAllowed("Slack days are spent by students of the course.")
    assignment = _assignment(course, assignment_id)
    if not assignment.accepts_slack:
        raise DomainError(f"Slack days do not apply to {assignment.code}.")
    # The actor's group and its current members in one query.
    rows = compiled_query("slack.apply.members", _group_of, course.pk, actor.pk)
    group = rows[0].group if rows else None
    members = sorted((m.user for m in rows), key=lambda u: u.pk) or [actor]
    try:
        return _apply_locked(
            course, assignment, actor, members, group, charged_by=charged_by, reason=reason
        )
    except IntegrityError:  # a racing request of the same group took the slot first
        raise Conflict(
            f"A slack day on {assignment.code} was just applied; reload to see it."
        ) from None


def _apply_locked(
    course: Course,
    assignment: Assignment,
    actor: User,
    members: list[User],
    group: Group | None,
    *,
    charged_by: User | None,
    reason: str,
) -> list[LedgerEntry]:
    """slack_apply's transaction: the accounts locked with their spends on the assignment read
    in the same statement, the checks, then the spend. An IntegrityError leaves it rolled back
    (no savepoint: the caller turns it into the Conflict)."""
    with transaction.atomic():
        accounts = _lock_accounts(course, members, spends_on=assignment)
        active: dict[int, int] = {s.pk: getattr(accounts[s.pk], "spends_here", 0) for s in members}
        stacks = _relief_allows_slack(course, assignment, members, group, active)
        if charged_by is None:
            mine = stacks[actor.pk]
            without = mine.base + dt.timedelta(hours=mine.exception_hours)
            limit = rules.add_calendar_days(
                without,
                active[actor.pk] + 1,
                course.timezone,
            )
            if timezone.now() > limit:
                raise Conflict(
                    f"A slack day on {assignment.code} would have moved the deadline to "
                    f"{format_instant(limit, course.timezone)}, which has passed."
                )
        out = []
        for s in members:
            why = rules.can_spend(
                balance_left=accounts[s.pk].balance,
                active_on_assignment=active[s.pk],
                max_per_assignment=course.slack_days_max_per_assignment,
            )
            if why:
                out.append(f"{s.get_full_name()} {why}")
        if out:
            raise Conflict("Nothing was charged: " + "; ".join(out) + ".")
        entries = _spend_all(
            members,
            accounts,
            active,
            assignment=assignment,
            group=group,
            actor=charged_by or actor,
            reason=reason or "applied by the group",
        )
        audit_record(
            actor=charged_by or actor,
            action="slack.spent",
            course=course,
            obj=assignment,
            after={"group": group.name if group else None, "members": [m.email for m in members]},
        )
    return entries


def _relief_allows_slack(
    course: Course,
    assignment: Assignment,
    members: list[User],
    group: Group | None,
    spends_here: dict[int, int],
) -> dict[int, rules.ReliefStack]:
    """The relief rule for one more slack day on every member's deadline (accounts locked, with
    their live days on the assignment): within the cap, and, where extensions refund slack, not
    on a deadline with an extension."""
    from apps.slackdays import relief

    j = relief.relief_judge(
        course,
        assignment,
        members,
        adding_hours=24,
        kind="slack",
        group=group,
        spends_here=spends_here,
    )
    if j.refusal:
        raise Conflict(f"Nothing was charged: {j.refusal}")
    if course.relief_slack_with_extension == "refund":
        has = [
            s.get_full_name() or s.email
            for s in members
            if any("extension" in p.kind for p in j.stacks[s.pk].parts)
        ]
        if has:
            raise Conflict(
                f"Nothing was charged: {assignment.code} already has an extension for "
                f"{', '.join(has)}, and in this course slack days do not stack on an extension."
            )
    return j.stacks


def slack_cancel(*, actor: User, course: Course, assignment_id: int) -> list[LedgerEntry]:
    """A student cancels their group's slack day before the original deadline; every member
    charged in that spend gets the day back."""
    if not is_student(actor, course):
        raise NotAllowed("Students cancel their own slack days; staff refund them.")
    assignment = _assignment(course, assignment_id)
    with transaction.atomic():
        mine = (
            ActiveSpend.objects.filter(
                account__course=course, account__student=actor, assignment=assignment
            )
            .select_related("entry")
            .order_by("-slot")
            .first()
        )
        if mine is None:
            raise DomainError(f"You have no slack day on {assignment.code} to cancel.")
        original = deadline_without_slack(course, assignment, actor)
        if timezone.now() >= original:
            raise Conflict(
                f"The original deadline ({format_instant(original, course.timezone)}) has passed; "
                f"ask the course staff for a refund."
            )
        batch = list(
            LedgerEntry.objects.filter(batch=mine.entry.batch, kind="spend").select_related(
                "account__student", "assignment", "group"
            )
        )
        entries = _reverse(
            course, batch, kind="cancel", actor=actor, reason="cancelled before the deadline"
        )
        audit_record(
            actor=actor,
            action="slack.cancelled",
            course=course,
            obj=assignment,
            after={"restored": [e.account.student.email for e in entries]},
        )
    return entries


def slack_refund(
    *, actor: User, course: Course, student_id: int, assignment_id: int, reason: str
) -> LedgerEntry:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff refund slack days.")
    if not reason.strip():
        raise DomainError("Give a reason for the refund.", field="reason")
    assignment = _assignment(course, assignment_id)
    with transaction.atomic():
        spend = (
            ActiveSpend.objects.filter(
                account__course=course, account__student_id=student_id, assignment=assignment
            )
            .select_related("entry__account__student", "entry__assignment", "entry__group")
            .order_by("-slot")
            .first()
        )
        if spend is None:
            raise DomainError(f"That student has no slack day on {assignment.code}.")
        entries = _reverse(course, [spend.entry], kind="refund", actor=actor, reason=reason)
        if not entries:
            raise Conflict("That slack day was just refunded or cancelled.")
        audit_record(
            actor=actor,
            action="slack.refunded",
            course=course,
            obj=assignment,
            after={"student": spend.entry.account.student.email, "reason": reason},
        )
    return entries[0]


def slack_adjust(
    *, actor: User, course: Course, student_id: int, delta: int, reason: str
) -> LedgerEntry:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff adjust slack balances.")
    if not reason.strip():
        raise DomainError("Give a reason for the adjustment.", field="reason")
    if delta == 0:
        raise DomainError("An adjustment changes the balance by at least one day.", field="delta")
    student = (
        Membership.objects.filter(course=course, user_id=student_id, role=Role.STUDENT)
        .select_related("user")
        .first()
    )
    if student is None:
        raise NotFound("No such student in this course.")
    with transaction.atomic():
        account = _lock_accounts(course, [student.user])[student.user.pk]
        e = _append(account, kind="adjustment", delta=delta, actor=actor, reason=reason)
        audit_record(
            actor=actor,
            action="slack.adjusted",
            course=course,
            obj=account,
            after={"delta": delta, "reason": reason},
        )
    return e


def exception_grant(**kwargs: Any) -> list[DeadlineException]:
    """Staff grant extra hours, judged by the relief rule: see `grants.exception_grant`."""
    from apps.slackdays.grants import exception_grant as grant

    return grant(**kwargs)


def exception_revoke(*, actor: User, course: Course, exception_id: int) -> DeadlineException:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff revoke exceptions.")
    with transaction.atomic():
        e = (
            DeadlineException.objects.select_for_update()
            .filter(course=course, pk=exception_id, revoked_at__isnull=True)
            .first()
        )
        if e is None:
            raise NotFound("No such exception in force.")
        e.revoked_at = timezone.now()
        e.save(update_fields=["revoked_at"])
        audit_record(actor=actor, action="exception.revoked", course=course, obj=e)
    return e


def late_work_decide(*, actor: User, course: Course, late_work_id: int, status: str) -> LateWork:
    """Staff record what happens to late work slack could not cover (an exception granted, or
    left as late). Audited; the extension itself is granted with `exception_grant`."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff decide on late work.")
    if status not in LateWork.Status.values:
        raise DomainError(
            f"Status must be one of: {', '.join(LateWork.Status.values)}.", field="status"
        )
    with transaction.atomic():
        lw = (
            LateWork.objects.select_for_update()
            .filter(course=course, pk=late_work_id)
            .select_related("student", "assignment")
            .first()
        )
        if lw is None:
            raise NotFound("No such late work in this course.")
        before = lw.status
        lw.status = status
        lw.save(update_fields=["status"])
        audit_record(
            actor=actor,
            action="late_work.decided",
            course=course,
            obj=lw,
            before={"status": before},
            after={"status": status},
        )
    return lw
