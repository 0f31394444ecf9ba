"""Calendar rules as pure functions of plain values."""

from __future__ import annotations

import datetime as dt


def reminder_offset_due(*, due: dt.datetime, offsets: list[int], now: dt.datetime) -> int | None:
    """Which reminder (hours before `due`) should go out at `now`, or None.

    The one whose moment (due − offset) is the latest that has passed: at 30 h before, the 48 h
    reminder; at 5 h before, the 6 h one, even if the 48 h one never went (a late task run sends
    the reminder that fits now, not a stale one). Nothing once the deadline has passed.
    """
    if now >= due:
        return None
    passed = [o for o in offsets if o > 0 and due - dt.timedelta(hours=o) <= now]
    return min(passed) if passed else None


def reminder_horizon(offsets: list[int]) -> dt.timedelta:
    """How far ahead the reminder task must look: the largest offset."""
    return dt.timedelta(hours=max((o for o in offsets if o > 0), default=0))


def with_same_time(old: dt.datetime, new_date: dt.date, tz: dt.tzinfo) -> dt.datetime:
    """`old`'s wall-clock time on `new_date` in `tz` (aware UTC out): moving a lecture or a
    deadline to another day keeps its local time across a daylight-saving change."""
    local = old.astimezone(tz)
    return dt.datetime.combine(new_date, local.time(), tzinfo=tz).astimezone(dt.UTC)
