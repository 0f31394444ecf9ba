"""`FieldsOnceModelSerializer` works out a ModelSerializer's fields once per class: every
instance still gets fields of its own, bound to it, so two requests (or threads) serializing at
once never share a field's parent or its state."""

from __future__ import annotations

import datetime as dt

from apps.calendar.models import Assignment
from apps.core.models import User
from apps.slackdays.api.views import LedgerEntrySerializer
from apps.slackdays.models import LedgerEntry, SlackAccount


def _entry(seq: int, email: str) -> LedgerEntry:
    student = User(pk=seq, email=email)
    return LedgerEntry(
        pk=seq,
        seq=seq,
        account=SlackAccount(pk=seq, student=student, balance=2, allowance=3),
        kind="spend",
        delta=-1,
        balance_after=2,
        assignment=Assignment(pk=1, code="A1"),
        actor=student,
        reason="applied by the group",
        created_at=dt.datetime(2026, 3, 2, 17, 0, tzinfo=dt.UTC),
    )


def test_each_instance_has_its_own_bound_fields_and_the_same_output() -> None:
    first = LedgerEntrySerializer(_entry(1, "ada@example.edu"))
    second = LedgerEntrySerializer(_entry(2, "bo@example.edu"))
    assert list(first.fields) == list(second.fields)
    for name in first.fields:
        assert first.fields[name] is not second.fields[name]
        assert first.fields[name].parent is first
        assert second.fields[name].parent is second
    assert first.data["student"] == "ada@example.edu"
    assert second.data["student"] == "bo@example.edu"
    assert first.data["assignment"] == "A1"
    assert first.data["delta"] == -1
    assert set(first.data) == set(LedgerEntrySerializer.Meta.fields)
