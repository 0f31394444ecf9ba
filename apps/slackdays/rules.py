"""Slack-day and deadline rules as pure functions of plain values.

`effective_deadline` is the one function every page, API, feed and reminder uses:
base + exceptions (real hours) + slack (calendar days at the same wall-clock time in the course
zone, so a slack day across a daylight-saving change is 23 or 25 hours).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass
from enum import StrEnum


def add_calendar_days(instant: dt.datetime, days: int, tz: str) -> dt.datetime:
    """The same wall-clock time `days` later in `tz` (aware UTC in, aware UTC out)."""
    zone = zoneinfo.ZoneInfo(tz)
    local = instant.astimezone(zone)
    moved = dt.datetime.combine(local.date() + dt.timedelta(days=days), local.time(), tzinfo=zone)
    return moved.astimezone(dt.UTC)


def effective_deadline(
    base: dt.datetime,
    *,
    tz: str,
    extension_hours: int = 0,
    accommodation_hours: int = 0,
    slack_days: int = 0,
) -> dt.datetime:
    """base + exceptions (hours, relative to the base, so moving the base moves them) + slack."""
    with_exceptions = base + dt.timedelta(hours=extension_hours + accommodation_hours)
    return add_calendar_days(with_exceptions, slack_days, tz) if slack_days else with_exceptions


class Lateness(StrEnum):
    ON_TIME = "on_time"
    COVERED = "covered"  # late, within the slack window: a slack day covers it
    NOT_COVERED = "not_covered"  # later than slack can reach


def classify(
    *,
    submitted: dt.datetime,
    deadline_without_slack: dt.datetime,
    tz: str,
    grace_minutes: int,
    max_slack_days: int,
) -> tuple[Lateness, int]:
    """How late a submission is against the deadline before slack, and how many slack days
    (up to the per-assignment cap) would cover it."""
    grace = dt.timedelta(minutes=grace_minutes)
    if submitted <= deadline_without_slack + grace:
        return Lateness.ON_TIME, 0
    for days in range(1, max_slack_days + 1):
        if submitted <= add_calendar_days(deadline_without_slack, days, tz) + grace:
            return Lateness.COVERED, days
    return Lateness.NOT_COVERED, 0


@dataclass(frozen=True)
class Balance:
    allowance: int
    spent: int

    @property
    def left(self) -> int:
        return self.allowance - self.spent


def can_spend(
    *, balance_left: int, active_on_assignment: int, max_per_assignment: int
) -> str | None:
    """Why a student cannot spend one more slack day on an assignment, or None."""
    if balance_left <= 0:
        return "has no slack days left"
    if active_on_assignment >= max_per_assignment:
        return (
            f"already used {active_on_assignment} on this assignment "
            f"(the most allowed is {max_per_assignment})"
        )
    return None
