"""Slack days' invariants for `check_course`: a balance is derived from the ledger."""

from __future__ import annotations

from django.db.models import F, Sum
from django.db.models.functions import Coalesce

from apps.slackdays.models import SlackAccount


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
