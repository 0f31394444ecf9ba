"""Deadline and slack rules, table-driven, including the 8 March 2026 daylight-saving change."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.slackdays.rules import (
    Lateness,
    add_calendar_days,
    can_spend,
    classify,
    effective_deadline,
)

PT = "America/Los_Angeles"
Z = zoneinfo.ZoneInfo(PT)


def local(y: int, m: int, d: int, h: int, mi: int) -> dt.datetime:
    return dt.datetime(y, m, d, h, mi, tzinfo=Z).astimezone(dt.UTC)


@pytest.mark.parametrize(
    ("base", "expected", "real_hours"),
    [
        (local(2026, 3, 7, 23, 59), local(2026, 3, 8, 23, 59), 23),  # across spring forward
        (local(2026, 3, 10, 23, 59), local(2026, 3, 11, 23, 59), 24),  # A3's due date, ordinary
        (local(2026, 10, 31, 23, 59), local(2026, 11, 1, 23, 59), 25),  # across fall back
        (local(2026, 2, 10, 23, 59), local(2026, 2, 11, 23, 59), 24),  # A1
    ],
)
def test_a_slack_day_is_the_same_wall_clock_time_next_day(
    base: dt.datetime, expected: dt.datetime, real_hours: int
) -> None:
    moved = add_calendar_days(base, 1, PT)
    assert moved == expected
    assert moved - base == dt.timedelta(hours=real_hours)
    assert moved.astimezone(Z).strftime("%H:%M") == "23:59"


@pytest.mark.parametrize(
    ("ext", "acc", "slack", "expected"),
    [
        (0, 0, 0, local(2026, 3, 7, 23, 59)),
        (0, 0, 1, local(2026, 3, 8, 23, 59)),
        (24, 0, 0, local(2026, 3, 9, 0, 59)),  # 24 real hours across the change
        (
            0,
            48,
            1,
            local(2026, 3, 11, 0, 59),
        ),  # accommodation, then slack to the next day same clock
        (12, 12, 1, local(2026, 3, 10, 0, 59)),
    ],
)
def test_effective_deadline_is_base_plus_exceptions_plus_slack(
    ext: int, acc: int, slack: int, expected: dt.datetime
) -> None:
    base = local(2026, 3, 7, 23, 59)
    assert (
        effective_deadline(
            base, tz=PT, extension_hours=ext, accommodation_hours=acc, slack_days=slack
        )
        == expected
    )


def test_moving_the_base_moves_every_extension_with_it() -> None:
    a = effective_deadline(local(2026, 3, 10, 23, 59), tz=PT, extension_hours=36, slack_days=1)
    b = effective_deadline(local(2026, 3, 11, 23, 59), tz=PT, extension_hours=36, slack_days=1)
    assert b - a == dt.timedelta(days=1)


@pytest.mark.parametrize(
    ("submitted", "grace", "lateness", "days"),
    [
        (local(2026, 3, 7, 23, 59), 0, Lateness.ON_TIME, 0),
        (local(2026, 3, 8, 0, 4), 5, Lateness.ON_TIME, 0),  # inside grace
        (local(2026, 3, 8, 0, 4), 0, Lateness.COVERED, 1),
        (local(2026, 3, 8, 23, 59), 0, Lateness.COVERED, 1),  # 23 real hours late: still one day
        (local(2026, 3, 9, 0, 0), 0, Lateness.NOT_COVERED, 0),
        (
            local(2026, 3, 9, 0, 3),
            5,
            Lateness.COVERED,
            1,
        ),  # grace applies to the slack deadline too
    ],
)
def test_lateness_classification(
    submitted: dt.datetime, grace: int, lateness: Lateness, days: int
) -> None:
    assert classify(
        submitted=submitted,
        deadline_without_slack=local(2026, 3, 7, 23, 59),
        tz=PT,
        grace_minutes=grace,
        max_slack_days=1,
    ) == (lateness, days)


def test_can_spend() -> None:
    assert can_spend(balance_left=1, active_on_assignment=0, max_per_assignment=1) is None
    assert (
        can_spend(balance_left=0, active_on_assignment=0, max_per_assignment=1)
        == "has no slack days left"
    )
    assert "already used 1" in (
        can_spend(balance_left=2, active_on_assignment=1, max_per_assignment=1) or ""
    )


@given(
    day=st.dates(min_value=dt.date(2024, 1, 1), max_value=dt.date(2030, 12, 31)),
    n=st.integers(1, 5),
)
def test_slack_keeps_the_wall_clock_time_every_day_of_the_year(day: dt.date, n: int) -> None:
    base = dt.datetime.combine(day, dt.time(23, 59), tzinfo=Z).astimezone(dt.UTC)
    moved = add_calendar_days(base, n, PT).astimezone(Z)
    assert (moved.date() - day).days == n
    assert moved.strftime("%H:%M") == "23:59"
