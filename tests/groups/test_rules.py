from __future__ import annotations

import datetime as dt

import pytest

from apps.groups import rules

DEADLINE = dt.datetime(2026, 1, 30, 7, 59, tzinfo=dt.UTC)  # Jan 29 23:59 PST


@pytest.mark.parametrize(
    ("now", "is_open"),
    [
        (DEADLINE - dt.timedelta(days=3), True),
        (DEADLINE, True),
        (DEADLINE + dt.timedelta(seconds=1), False),
        (DEADLINE + dt.timedelta(days=200), False),
    ],
)
def test_formation_is_open_until_the_deadline_inclusive(now: dt.datetime, is_open: bool) -> None:
    assert rules.formation_open(now=now, deadline=DEADLINE) is is_open


def test_no_deadline_means_open() -> None:
    assert rules.formation_open(now=DEADLINE, deadline=None)


@pytest.mark.parametrize(("size", "ok"), [(0, True), (5, True), (6, False), (7, False)])
def test_can_join_below_the_maximum(size: int, ok: bool) -> None:
    assert rules.can_join(size=size, max_size=6) is ok


@pytest.mark.parametrize(
    ("size", "status"), [(0, "under"), (3, "under"), (4, "ok"), (5, "ok"), (6, "full")]
)
def test_size_status(size: int, status: str) -> None:
    assert rules.size_status(size=size, min_size=4, max_size=6) == status


@pytest.mark.parametrize(
    ("raw", "code"),
    [("abcd2345", "ABCD2345"), (" ABCD-2345 ", "ABCD2345"), ("ab cd 23 45", "ABCD2345")],
)
def test_join_codes_forgive_case_spaces_and_dashes(raw: str, code: str) -> None:
    assert rules.normalize_join_code(raw) == code


def test_group_names_collapse_whitespace() -> None:
    assert rules.clean_group_name("  Ring   Reduce ") == "Ring Reduce"
