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


# --- Relief: every source of more time on one deadline, under one cap ------------------------
#
# The course file (`policy.relief`, stored on the Course) says how the sources compose:
#   * slack days, the student's own extensions, their group's extensions and — when
#     `accommodations_count` — their accommodations are one *relief* on the deadline, counted
#     in hours (a slack day counts 24 h, whatever a daylight-saving change makes of it);
#   * the relief counted is at most `cap_days` × 24 h (None: no cap), unless staff confirmed a
#     larger total when granting (an exception's `cap_days_confirmed`, with its audit row);
#   * the effective deadline is never later than base + uncounted hours + the cap in calendar
#     days: relief past the cap without a staff confirmation (a student who joins a group
#     brings their own extensions along) is held at the cap, and the stack says so;
#   * `slack_with_extension` "stack": both count; "refund": an approved extension refunds the
#     slack spent on that deadline, and slack is not spent on a deadline that has an extension.
# Every extension request, slack spend and staff grant asks `relief_refusal` before it writes.


@dataclass(frozen=True)
class ReliefPolicy:
    cap_days: int | None = 7
    slack_with_extension: str = "stack"  # "stack" | "refund"
    accommodations_count: bool = True
    over_cap: str = "staff"  # "refuse" | "staff"


@dataclass(frozen=True)
class ReliefPart:
    """One source of relief on one deadline: `kind` is "slack", "extension" (the student's own),
    "group extension" or "accommodation"; `hours` (a slack day is 24); `since` when granted."""

    kind: str
    hours: int
    since: dt.datetime | None = None
    confirmed_days: int | None = None  # staff confirmed this total past the cap


@dataclass(frozen=True)
class ReliefStack:
    base: dt.datetime
    tz: str
    policy: ReliefPolicy
    parts: tuple[ReliefPart, ...]

    def _counts(self, p: ReliefPart) -> bool:
        return p.kind != "accommodation" or self.policy.accommodations_count

    @property
    def counted_hours(self) -> int:
        return sum(p.hours for p in self.parts if self._counts(p))

    @property
    def uncounted_hours(self) -> int:
        return sum(p.hours for p in self.parts if not self._counts(p))

    @property
    def slack_days(self) -> int:
        return sum(p.hours for p in self.parts if p.kind == "slack") // 24

    @property
    def exception_hours(self) -> int:
        return sum(p.hours for p in self.parts if p.kind != "slack")

    @property
    def cap_days(self) -> int | None:
        """The course's cap, or the larger total staff confirmed on a grant here."""
        confirmed = [p.confirmed_days for p in self.parts if p.confirmed_days]
        if self.policy.cap_days is None:
            return None
        return max([self.policy.cap_days, *confirmed])

    @property
    def room_hours(self) -> int | None:
        """Hours of relief still allowed under the cap (None: no cap)."""
        cap = self.cap_days
        return None if cap is None else max(0, cap * 24 - self.counted_hours)

    @property
    def over_hours(self) -> int:
        """Counted relief past the cap (held at the cap, never silently given)."""
        cap = self.cap_days
        return 0 if cap is None else max(0, self.counted_hours - cap * 24)

    @property
    def limit(self) -> dt.datetime | None:
        cap = self.cap_days
        if cap is None:
            return None
        return add_calendar_days(self.base + dt.timedelta(hours=self.uncounted_hours), cap, self.tz)

    @property
    def effective(self) -> dt.datetime:
        """base + exceptions + slack, never past the cap's limit."""
        moved = effective_deadline(
            self.base, tz=self.tz, extension_hours=self.exception_hours, slack_days=self.slack_days
        )
        limit = self.limit
        return min(moved, limit) if limit is not None else moved

    # For the pages: the stack in words.
    @property
    def text(self) -> str:
        return stack_text(self)

    @property
    def room_text(self) -> str:
        room = self.room_hours
        return "no cap" if room is None else span(room)

    @property
    def over_text(self) -> str:
        return span(self.over_hours) if self.over_hours else ""


def relief_stack(
    base: dt.datetime, *, tz: str, policy: ReliefPolicy, parts: list[ReliefPart]
) -> ReliefStack:
    return ReliefStack(base=base, tz=tz, policy=policy, parts=tuple(parts))


def span(hours: int) -> str:
    """'1 day', '2 days', '36 h', '1 day 6 h'."""
    days, rest = divmod(hours, 24)
    out = f"{days} day{'s' if days != 1 else ''}" if days else ""
    if rest:
        out = f"{out} {rest} h".strip()
    return out or "0 days"


def stack_text(stack: ReliefStack) -> str:
    """'+1 day (slack) and +2 days (group extension, approved Nov 27)', or 'no extra time'."""
    if not stack.parts:
        return "no extra time"
    bits = []
    for p in stack.parts:
        when = ""
        if p.since is not None:
            local = p.since.astimezone(zoneinfo.ZoneInfo(stack.tz))
            when = f", {'approved' if 'extension' in p.kind else 'since'} {local:%b} {local.day}"
        note = "" if stack._counts(p) else ", not counted"
        bits.append(f"+{span(p.hours)} ({p.kind}{when}{note})")
    return bits[0] if len(bits) == 1 else ", ".join(bits[:-1]) + " and " + bits[-1]


def relief_refusal(
    stack: ReliefStack, *, code: str, adding_hours: int, counted: bool = True
) -> str | None:
    """Why `adding_hours` more relief on this deadline would pass the cap (the arithmetic, for
    the student and staff alike), or None when it fits."""
    room = stack.room_hours
    if room is None or not counted or adding_hours <= room:
        return None
    have = "has " + stack_text(stack) if stack.parts else "has no extra time yet"
    more = f"at most {span(room)} more" if room else "no more"
    return f"{code} already {have}: at most {span((stack.cap_days or 0) * 24)} in all, so {more}."
