"""Reads: a student's deadlines (base, exceptions, slack, effective) and balances for staff."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.calendar.cache import course_calendar
from apps.calendar.models import Assignment
from apps.core.compiled import compiled_query
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.todaycache import reads, student_cached
from apps.groups.models import GroupMembership
from apps.groups.selectors import current_group_id
from apps.slackdays import rules
from apps.slackdays.models import ActiveSpend, DeadlineException, LedgerEntry, SlackAccount


@dataclass(frozen=True)
class StudentDeadline:
    assignment: Assignment
    base: dt.datetime
    extension_hours: int
    accommodation_hours: int
    slack_days: int
    effective: dt.datetime
    without_slack: dt.datetime
    can_apply: bool
    can_cancel: bool
    stack: rules.ReliefStack


def relief_policy(course: Course) -> rules.ReliefPolicy:
    """The course file's `policy.relief`, as the pure rule takes it."""
    return rules.ReliefPolicy(
        cap_days=course.relief_cap_days,
        slack_with_extension=course.relief_slack_with_extension,
        accommodations_count=course.relief_accommodations_count,
        over_cap=course.relief_over_cap,
    )


def _part(e: DeadlineException, *, group: bool = False) -> rules.ReliefPart:
    kind = "accommodation" if e.kind == "accommodation" else "extension"
    return rules.ReliefPart(
        kind=f"group {kind}" if group else kind,
        hours=e.hours,
        since=e.created_at,
        confirmed_days=e.cap_days_confirmed,
    )


def _sort_parts(parts: list[DeadlineException]) -> list[DeadlineException]:
    return sorted(parts, key=lambda e: (e.created_at, e.pk))


def student_deadlines(*, course: Course, student: User) -> list[StudentDeadline]:
    """Every assignment with the student's effective deadline (5 queries, any number of
    assignments). The one place pages, API, feeds and reminders take a student's deadlines from."""
    return student_slack(course=course, student=student)[1]


def student_slack_memo(
    memo: dict[str, Any], *, course: Course, student: User
) -> tuple[int, list[StudentDeadline]]:
    """`student_slack`, computed once per `memo` (a request's): the dashboard's panels share it."""
    key = f"student_slack:{course.pk}:{student.pk}"
    if key not in memo:
        left, _, rows = student_slack_full(course=course, student=student, memo=memo)
        memo[key] = (left, rows)
    return memo[key]


def student_slack(*, course: Course, student: User) -> tuple[int, list[StudentDeadline]]:
    """(slack days left, `student_deadlines`): see `student_slack_full`."""
    left, _, rows = student_slack_full(course=course, student=student)
    return left, rows


def _exceptions(course_id: int, student_id: int) -> QuerySet[DeadlineException]:
    return DeadlineException.objects.filter(
        course_id=course_id, student_id=student_id, revoked_at__isnull=True
    ).order_by()


def _exceptions_with_group(
    course_id: int, student_id: int, group_id: int
) -> QuerySet[DeadlineException]:
    return DeadlineException.objects.filter(
        Q(student_id=student_id) | Q(group_id=group_id),
        course_id=course_id,
        revoked_at__isnull=True,
    ).order_by()


def _account_rows(course_id: int, student_id: int) -> QuerySet[Any]:
    return SlackAccount.objects.filter(course_id=course_id, student_id=student_id).values_list(
        "balance", "allowance", "active_spends__assignment_id"
    )


# What a student's slack standing is computed from (apps.core.todaycache watches their tables).
SLACK_READS = reads("slackdays", "coursecalendar", "groups", "core.Course")


def student_slack_full(
    *, course: Course, student: User, memo: dict[str, Any] | None = None
) -> tuple[int, int, list[StudentDeadline]]:
    """(days left, allowance, deadlines) from 2 queries whatever the course's size: the
    student's and their group's exceptions, and the slack account joined to its active spends
    (the assignments come from the course's cached calendar). Kept in the cache until one of
    `SLACK_READS` is written (or the minute turns): the slack page, `slack/me`, Today and the
    question sets all show it."""
    return student_cached(
        course,
        student.pk,
        timezone.now(),
        "slack",
        SLACK_READS,
        lambda: _student_slack_full(course=course, student=student, memo=memo),
    )


def _student_slack_full(
    *, course: Course, student: User, memo: dict[str, Any] | None
) -> tuple[int, int, list[StudentDeadline]]:
    ext: dict[int, list[rules.ReliefPart]] = defaultdict(list)
    acc: list[rules.ReliefPart] = []
    # Only this student's and their group's exceptions: the course may hold thousands.
    gid = current_group_id(course=course, user=student, memo=memo)
    exceptions = (
        compiled_query("slack.exceptions.group", _exceptions_with_group, course.pk, student.pk, gid)
        if gid is not None
        else compiled_query("slack.exceptions", _exceptions, course.pk, student.pk)
    )
    for e in _sort_parts(list(exceptions)):
        if e.kind == "accommodation" and e.student_id == student.pk:
            acc.append(_part(e))
        elif e.kind == "extension" and e.assignment_id:  # the student's own, or their group's
            ext[e.assignment_id].append(_part(e, group=e.group_id is not None))
    slack: dict[int, int] = defaultdict(int)
    left = allowance = course.slack_days_allowance  # no account yet: nothing spent
    for balance, allowed, a_id in compiled_query(
        "slack.account", _account_rows, course.pk, student.pk
    ):
        # one row per active spend (LEFT JOIN), or one row with None
        left, allowance = balance, allowed
        if a_id is not None:
            slack[a_id] += 1
    return left, allowance, _deadlines(course, ext, acc, slack, left)


def _deadlines(
    course: Course,
    ext: dict[int, list[rules.ReliefPart]],
    acc: list[rules.ReliefPart],
    slack: dict[int, int],
    left: int,
) -> list[StudentDeadline]:
    """Each assignment's deadline for one student from their extensions (own and group's) by
    assignment, accommodations, slack days spent by assignment and days left: the relief rule
    (`rules.relief_stack`) gives the effective deadline, never past the course's cap."""
    now = timezone.now()
    policy = relief_policy(course)
    out = []
    for a in course_calendar(course).assignments:
        slack_parts = [rules.ReliefPart(kind="slack", hours=24)] * slack[a.pk]
        stack = rules.relief_stack(
            a.due_at, tz=course.timezone, policy=policy, parts=slack_parts + ext[a.pk] + acc
        )
        ext_hours = sum(p.hours for p in ext[a.pk])
        acc_hours = sum(p.hours for p in acc)
        without = rules.effective_deadline(
            a.due_at, tz=course.timezone, extension_hours=ext_hours, accommodation_hours=acc_hours
        )
        next_limit = rules.add_calendar_days(without, slack[a.pk] + 1, course.timezone)
        room = stack.room_hours
        stacks_ok = policy.slack_with_extension == "stack" or not ext[a.pk]
        out.append(
            StudentDeadline(
                assignment=a,
                base=a.due_at,
                extension_hours=ext_hours,
                accommodation_hours=acc_hours,
                slack_days=slack[a.pk],
                effective=stack.effective,
                without_slack=without,
                can_apply=a.accepts_slack
                and left > 0
                and slack[a.pk] < course.slack_days_max_per_assignment
                and now <= next_limit
                and (room is None or room >= 24)
                and stacks_ok,
                can_cancel=slack[a.pk] > 0 and now < without,
                stack=stack,
            )
        )
    return out


def students_slack(
    *, course: Course, student_ids: Iterable[int]
) -> dict[int, tuple[int, list[StudentDeadline]]]:
    """`student_slack` for many students in 3 queries, whatever their number (a staff queue's
    page): {student id: (days left, deadlines)}."""
    ids = set(student_ids)
    ext, acc, slack, left = relief_rows(course, ids, None)
    return {i: (left[i], _deadlines(course, ext[i], acc[i], slack[i], left[i])) for i in ids}


def assignment_stacks(
    *,
    course: Course,
    assignment: Assignment,
    groups: dict[int, int | None],
    spends_here: dict[int, int] | None = None,
) -> dict[int, rules.ReliefStack]:
    """Each student's relief on one assignment, from 2 queries whatever their number; `groups`
    is {student id: their current group id or None}, which the caller has already locked.
    `spends_here` ({student id: live slack days on this assignment}), when the caller read them
    with the accounts it locked, saves the second query."""
    ext, acc, slack, _ = relief_rows(course, set(groups), groups, accounts=spends_here is None)
    policy = relief_policy(course)
    here = spends_here if spends_here is not None else {i: slack[i][assignment.pk] for i in groups}
    return {
        i: rules.relief_stack(
            assignment.due_at,
            tz=course.timezone,
            policy=policy,
            parts=[rules.ReliefPart(kind="slack", hours=24)] * here[i]
            + ext[i][assignment.pk]
            + acc[i],
        )
        for i in groups
    }


# Up to this many students (a group is at most six) relief_rows' reads are compiled once per
# shape and process (apps/core/compiled.py): a slack spend's relief check was a third of its
# Python in building these two querysets anew.
COMPILED_MAX = 8


def _exceptions_of(course_id: int, *ids: int) -> QuerySet[DeadlineException]:
    """Live exceptions of these students (a `compiled_query` builder: one `=` lookup per id, so
    the SQL's shape depends only on how many there are)."""
    return _exceptions_filter(course_id, None, ids)


def _group_exceptions_of(course_id: int, group_id: int, *ids: int) -> QuerySet[DeadlineException]:
    """Live exceptions of these students and of their group (a `compiled_query` builder)."""
    return _exceptions_filter(course_id, group_id, ids)


def _exceptions_filter(
    course_id: int, group_id: int | None, ids: tuple[int, ...]
) -> QuerySet[DeadlineException]:
    who = Q()
    for pk in ids:
        who |= Q(student_id=pk)
    if group_id is not None:
        who |= Q(group_id=group_id)
    return DeadlineException.objects.filter(
        who, course_id=course_id, revoked_at__isnull=True
    ).order_by()


def _accounts_of(course_id: int, *ids: int) -> QuerySet[Any]:
    """(student id, balance, assignment id of each live spend or None) of these students."""
    who = Q()
    for pk in ids:
        who |= Q(student_id=pk)
    return (
        SlackAccount.objects.filter(who, course_id=course_id)
        .order_by()
        .values_list("student_id", "balance", "active_spends__assignment_id")
    )


def relief_rows(
    course: Course, ids: set[int], known: dict[int, int | None] | None, *, accounts: bool = True
) -> tuple[
    dict[int, dict[int, list[rules.ReliefPart]]],
    dict[int, list[rules.ReliefPart]],
    dict[int, dict[int, int]],
    dict[int, int],
]:
    """(extensions by student and assignment, accommodations, slack days by student and
    assignment, days left) for these students; their groups read unless `known`. With
    `accounts` False the accounts are not read: no slack days, and the allowance as days left."""
    if known is None:
        groups = dict(
            GroupMembership.objects.filter(
                course=course, user_id__in=ids, left_at__isnull=True
            ).values_list("user_id", "group_id")
        )
    else:
        groups = {uid: gid for uid, gid in known.items() if gid is not None}
    ext: dict[int, dict[int, list[rules.ReliefPart]]] = {i: defaultdict(list) for i in ids}
    acc: dict[int, list[rules.ReliefPart]] = {i: [] for i in ids}
    members: dict[int, list[int]] = defaultdict(list)
    for uid, gid in groups.items():
        members[gid].append(uid)
    few = 0 < len(ids) <= COMPILED_MAX and len(members) <= 1
    if few:  # a group's spend or one student's page: SQL built once per shape and process
        the_group = next(iter(members), None)
        who = sorted(ids)
        exceptions: list[DeadlineException] = (
            compiled_query(
                f"slack.relief.exceptions.{len(who)}.group",
                _group_exceptions_of,
                course.pk,
                the_group,
                *who,
            )
            if the_group is not None
            else compiled_query(
                f"slack.relief.exceptions.{len(who)}", _exceptions_of, course.pk, *who
            )
        )
    else:
        exceptions = list(
            DeadlineException.objects.filter(
                Q(student_id__in=ids) | Q(group_id__in=list(members)),
                course=course,
                revoked_at__isnull=True,
            ).order_by()
        )
    for e in _sort_parts(exceptions):
        if e.kind == "accommodation" and e.student_id in ids:
            acc[e.student_id].append(_part(e))
        elif e.kind == "extension" and e.assignment_id:
            for uid in [e.student_id] if e.student_id else members.get(e.group_id or 0, []):
                if uid in ext:
                    ext[uid][e.assignment_id].append(_part(e, group=e.group_id is not None))
    slack: dict[int, dict[int, int]] = {i: defaultdict(int) for i in ids}
    left: dict[int, int] = dict.fromkeys(ids, course.slack_days_allowance)
    rows: Iterable[tuple[int, int, int | None]] = (
        ()
        if not accounts
        else compiled_query(
            f"slack.relief.accounts.{len(ids)}", _accounts_of, course.pk, *sorted(ids)
        )
        if few
        else SlackAccount.objects.filter(course=course, student_id__in=ids).values_list(
            "student_id", "balance", "active_spends__assignment_id"
        )
    )
    for uid, balance, a_id in rows:
        left[uid] = balance
        if a_id is not None:
            slack[uid][a_id] += 1
    return ext, acc, slack, left


def ledger_for(*, course: Course, student: User) -> QuerySet[LedgerEntry]:
    return ledger_of(course.pk, student.pk)


def ledger_of(course_id: int, student_id: int) -> QuerySet[LedgerEntry]:
    """A student's ledger, newest first (by ids: a `compiled_query` builder can call it), with
    each entry's account and student joined: the API names the student of every entry, which
    read lazily cost two queries per entry."""
    return (
        LedgerEntry.objects.filter(account__course_id=course_id, account__student_id=student_id)
        .select_related("assignment", "actor", "group", "account__student")
        .order_by("-seq")
    )


@dataclass(frozen=True)
class BalanceRow:
    student: User
    group: str
    balance: int
    allowance: int
    used: list[str]


def balance_rows(
    *, course: Course, q: str = "", balance: int | None = None
) -> QuerySet[Membership]:
    """Active students of the course with `balance_now`, `allowance_now` and `group_name`
    annotated in SQL (a student without an account has the course's allowance), filtered by a
    search over name, email and group and by balance, ordered by name. Lazy: page it, or stream
    it, without loading the course."""
    account = SlackAccount.objects.filter(course=course, student_id=OuterRef("user_id"))
    group = GroupMembership.objects.filter(
        course=course, user_id=OuterRef("user_id"), left_at__isnull=True
    )
    rows = (
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .select_related("user")
        .annotate(
            balance_now=Coalesce(
                Subquery(account.values("balance")[:1]), Value(course.slack_days_allowance)
            ),
            allowance_now=Coalesce(
                Subquery(account.values("allowance")[:1]), Value(course.slack_days_allowance)
            ),
            group_name=Coalesce(Subquery(group.values("group__name")[:1]), Value("")),
        )
        .order_by("user__full_name", "user_id")
    )
    if q:
        rows = rows.filter(
            Q(user__full_name__icontains=q)
            | Q(user__email__icontains=q)
            | Q(group_name__icontains=q)
        )
    if balance is not None:
        rows = rows.filter(balance_now=balance)
    return rows


def balance_page(rows: Iterable[Membership], course: Course) -> list[BalanceRow]:
    """`BalanceRow`s for some annotated rows of `balance_rows` (one query for their slack uses)."""
    members = list(rows)
    used: dict[int, list[str]] = defaultdict(list)
    for student_id, code in ActiveSpend.objects.filter(
        account__course=course, account__student_id__in=[m.user_id for m in members]
    ).values_list("account__student_id", "assignment__code"):
        used[student_id].append(code)
    return [
        BalanceRow(m.user, m.group_name, m.balance_now, m.allowance_now, sorted(used[m.user_id]))  # type: ignore[attr-defined]
        for m in members
    ]


def ledger_list(
    *, user: User, course: Course, student_id: int | None = None
) -> QuerySet[LedgerEntry]:
    """Ledger entries, newest first: staff the whole course (or one student's); a student only
    their own, whatever `student_id` says."""
    qs = (
        LedgerEntry.objects.filter(account__course=course)
        .select_related("account__student", "assignment", "actor")
        .order_by("-created_at", "-id")
    )
    if not is_staff(user, course):
        return qs.filter(account__student=user)
    return qs.filter(account__student_id=student_id) if student_id is not None else qs


def exception_list(*, user: User, course: Course) -> QuerySet[DeadlineException]:
    """Exceptions in force: staff all; a student their own and their group's."""
    qs = DeadlineException.objects.filter(course=course, revoked_at__isnull=True).select_related(
        "student", "group", "assignment", "granted_by"
    )
    if is_staff(user, course):
        return qs
    gid = (
        GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True)
        .values_list("group_id", flat=True)
        .first()
    )
    return qs.filter(student=user) | qs.filter(group_id=gid or 0)
