"""The slack ledger's low-level writes, shared by the slack services and the relief rule:
open accounts, lock them in student order (with their spends on an assignment), append an
entry, reverse spends. Every caller is inside its own transaction."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from apps.calendar.models import Assignment
from apps.core.compiled import compiled_query
from apps.core.errors import Conflict
from apps.core.models import Course, User
from apps.groups.models import Group
from apps.slackdays.models import ActiveSpend, LedgerEntry, SlackAccount


def _ensure_accounts(course: Course, students: Iterable[User]) -> None:
    """Open a full account for each student that has none (one INSERT; existing ones untouched)."""
    SlackAccount.objects.bulk_create(
        [
            SlackAccount(
                course=course,
                student=s,
                allowance=course.slack_days_allowance,
                balance=course.slack_days_allowance,
            )
            for s in students
        ],
        ignore_conflicts=True,
    )


def _accounts_with_spends(
    course_id: int, assignment_id: int, *student_ids: int
) -> QuerySet[SlackAccount]:
    """These students' accounts, locked in student order, each with `spends_here`: its live
    spends on the assignment (one statement)."""
    who = Q()
    for pk in student_ids:
        who |= Q(student_id=pk)
    return (
        SlackAccount.objects.select_for_update(of=("self",))
        .filter(who, course_id=course_id)
        .annotate(
            spends_here=Coalesce(
                Subquery(
                    ActiveSpend.objects.filter(account=OuterRef("pk"), assignment_id=assignment_id)
                    .values("account")
                    .annotate(n=Count("id"))
                    .values("n")
                ),
                0,
            )
        )
        .order_by("student_id")
    )


def _lock_accounts(
    course: Course, students: list[User], *, spends_on: Assignment | None = None
) -> dict[int, SlackAccount]:
    """The students' accounts, locked in student order; a missing one is opened first (after the
    first spend of the term every account exists, so the common case is one statement). With
    `spends_on`, each account also carries `spends_here`: its live spends on that assignment,
    read in the same statement."""

    ids = sorted({s.pk for s in students})

    def lock() -> list[SlackAccount]:
        if spends_on is None:
            return list(
                SlackAccount.objects.select_for_update()
                .filter(course=course, student__in=students)
                .order_by("student_id")
            )
        # The hot path of the deadline hour: its SQL is built once per group size and process.
        return compiled_query(
            f"slack.lock_with_spends.{len(ids)}",
            _accounts_with_spends,
            course.pk,
            spends_on.pk,
            *ids,
        )

    accounts = lock()
    if len(accounts) < len(ids):
        _ensure_accounts(course, students)  # ON CONFLICT DO NOTHING waits for a racing opener
        accounts = lock()
    by_id = {s.pk: s for s in students}
    locked = {}
    for a in accounts:
        a.student = by_id[a.student_id]  # the caller's objects: no query per entry when shown
        locked[a.student_id] = a
    return locked


def _append(
    account: SlackAccount,
    *,
    kind: str,
    delta: int,
    actor: User | None,
    reason: str = "",
    assignment: Assignment | None = None,
    group: Group | None = None,
    batch: uuid.UUID | None = None,
    reverses: LedgerEntry | None = None,
) -> LedgerEntry:
    new_balance = account.balance + delta
    if not 0 <= new_balance <= account.allowance:
        raise Conflict(
            f"That would make {account.student}'s balance {new_balance}; it must stay between 0 "
            f"and {account.allowance}."
        )
    account.last_seq += 1
    account.balance = new_balance
    account.save(update_fields=["last_seq", "balance"])
    return LedgerEntry.objects.create(
        account=account,
        seq=account.last_seq,
        kind=kind,
        delta=delta,
        balance_after=new_balance,
        assignment=assignment,
        group=group,
        batch=batch or uuid.uuid4(),
        reverses=reverses,
        actor=actor,
        reason=reason[:300],
    )


def lock_accounts(course: Course, students: list[User]) -> dict[int, SlackAccount]:
    """The students' slack accounts locked in student order (the relief rule's lock)."""
    return _lock_accounts(course, students)


def reverse_spends(
    course: Course, spend_entries: list[LedgerEntry], *, kind: str, actor: User, reason: str
) -> list[LedgerEntry]:
    """Give back these spends (cancel or refund), accounts locked in student order."""
    return _reverse(course, spend_entries, kind=kind, actor=actor, reason=reason)


def _reverse(
    course: Course, spend_entries: list[LedgerEntry], *, kind: str, actor: User, reason: str
) -> list[LedgerEntry]:
    accounts = _lock_accounts(course, [e.account.student for e in spend_entries])
    out = []
    for e in sorted(spend_entries, key=lambda e: e.account.student_id):
        account = accounts[e.account.student_id]
        deleted, _ = ActiveSpend.objects.filter(entry=e).delete()
        if not deleted:
            continue  # already reversed by a concurrent request
        out.append(
            _append(
                account,
                kind=kind,
                delta=1,
                actor=actor,
                assignment=e.assignment,
                group=e.group,
                batch=e.batch,
                reverses=e,
                reason=reason,
            )
        )
    return out
