from __future__ import annotations

import datetime as dt
import zoneinfo

from hypothesis import given
from hypothesis import strategies as st

from apps.calendar.rules import reminder_offset_due, with_same_time

DUE = dt.datetime(2026, 3, 10, 6, 59, tzinfo=dt.UTC)  # Mar 9, 23:59 PDT


def at(hours_before: float) -> dt.datetime:
    return DUE - dt.timedelta(hours=hours_before)


def test_nothing_before_the_first_moment() -> None:
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=at(48.01)) is None


def test_the_48_hour_reminder_from_its_moment_until_the_6_hour_moment() -> None:
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=at(48)) == 48
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=at(6.01)) == 48


def test_a_late_run_sends_the_reminder_that_fits_now_not_a_stale_one() -> None:
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=at(6)) == 6
    assert reminder_offset_due(due=DUE, offsets=[6, 48], now=at(0.5)) == 6


def test_never_after_the_deadline() -> None:
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=DUE) is None
    assert reminder_offset_due(due=DUE, offsets=[48, 6], now=DUE + dt.timedelta(hours=1)) is None


@given(
    offsets=st.lists(st.integers(min_value=1, max_value=24 * 30), min_size=1, max_size=4),
    minutes_before=st.integers(min_value=-600, max_value=24 * 31 * 60),
)
def test_the_chosen_offset_has_passed_and_is_the_nearest(
    offsets: list[int], minutes_before: int
) -> None:
    now = DUE - dt.timedelta(minutes=minutes_before)
    got = reminder_offset_due(due=DUE, offsets=offsets, now=now)
    passed = [o for o in offsets if DUE - dt.timedelta(hours=o) <= now < DUE]
    assert got == (min(passed) if passed else None)


def test_moving_to_another_day_keeps_the_local_time_across_dst() -> None:
    la = zoneinfo.ZoneInfo("America/Los_Angeles")
    before = dt.datetime(2026, 3, 5, 9, 30, tzinfo=la).astimezone(dt.UTC)  # PST
    after = with_same_time(before, dt.date(2026, 3, 10), la)  # PDT
    assert after.astimezone(la).hour == 9
    assert after.astimezone(la).minute == 30
    assert after - before == dt.timedelta(days=5, hours=-1)
