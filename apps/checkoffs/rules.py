"""The rules of booking, as pure functions: when a slot closes, how a slot is named to people,
and how a day's range is cut into slots around a break."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass

from apps.core.timefmt import format_instant, format_short

FIRST_YEAR, LAST_YEAR = (
    2000,
    2100,
)  # slots and dates outside are typing mistakes (and overflow arithmetic)


def plausible(day: dt.date | dt.datetime) -> bool:
    return FIRST_YEAR <= day.year <= LAST_YEAR


def cutoff_at(starts_at: dt.datetime, hours: int) -> dt.datetime:
    """Bookings can be made, moved or cancelled until this instant (policy: 2 h before)."""
    return starts_at - dt.timedelta(hours=hours)


def is_open(starts_at: dt.datetime, hours: int, now: dt.datetime) -> bool:
    return now < cutoff_at(starts_at, hours)


def slot_label(starts_at: dt.datetime, location: str, tz_name: str) -> str:
    """'the Tue Apr 28, 9:30 AM slot at 521 Cory Hall' — how messages name a slot."""
    where = f" at {location}" if location else ""
    return f"the {format_short(starts_at, tz_name)} slot{where}"


def closed_message(
    starts_at: dt.datetime, location: str, hours: int, tz_name: str, what: str
) -> str:
    return (
        f"Too late to {what}: changes to {slot_label(starts_at, location, tz_name)} closed at "
        f"{format_instant(cutoff_at(starts_at, hours), tz_name)} ({hours} h before it starts). "
        "Ask course staff if something came up."
    )


@dataclass(frozen=True)
class Cut:
    starts_at: dt.datetime  # aware, UTC
    ends_at: dt.datetime


def cut_day(
    *,
    day: dt.date,
    start: dt.time,
    end: dt.time,
    minutes: int,
    tz_name: str,
    break_start: dt.time | None = None,
    break_end: dt.time | None = None,
) -> list[Cut]:
    """[start, end) on `day` in the course zone, cut into back-to-back `minutes`-long slots; a
    slot that would touch the break [break_start, break_end) is skipped, and the next one starts
    when the break ends. A remainder shorter than a slot is dropped."""
    if not plausible(day):
        raise ValueError(f"Pick a day between {FIRST_YEAR} and {LAST_YEAR}.")
    if minutes < 5 or minutes > 8 * 60:
        raise ValueError("A slot lasts between 5 minutes and 8 hours.")
    if end <= start:
        raise ValueError("The range must end after it starts.")
    if (break_start is None) != (break_end is None):
        raise ValueError("Give both ends of the break, or neither.")
    if break_start is not None and break_end is not None and break_end <= break_start:
        raise ValueError("The break must end after it starts.")
    zone = zoneinfo.ZoneInfo(tz_name)

    def at(t: dt.time) -> dt.datetime:
        return dt.datetime.combine(day, t, tzinfo=zone)

    step = dt.timedelta(minutes=minutes)
    cursor, stop = at(start), at(end)
    lunch = (at(break_start), at(break_end)) if break_start and break_end else None
    out: list[Cut] = []
    while cursor + step <= stop:
        if lunch and cursor < lunch[1] and cursor + step > lunch[0]:
            cursor = max(cursor, lunch[1])
            continue
        out.append(Cut(cursor.astimezone(dt.UTC), (cursor + step).astimezone(dt.UTC)))
        cursor += step
    return out
