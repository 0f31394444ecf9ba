"""The course's rules for GPU-hour quotas, the nightly shutdown and a node's activity, as pure
functions of plain values (no database): which period a quota counts, where a group stands
against it, when a night's shutdown falls in course time, and what a node's samples say.

A node's activity is "unknown" when it is RUNNING and its agent has sent nothing for
`SILENT_AFTER`: a node that stopped reporting is never called idle or busy, since a student
with sudo can remove the agent (or the node can hang) while the GPUs run at full tilt.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

SILENT_AFTER = dt.timedelta(minutes=30)
# A night's shutdown is made only this long after its time: a beat that was down longer skips
# the night rather than stopping nodes in the morning, in the middle of someone's work.
SHUTDOWN_GRACE = dt.timedelta(hours=1)
# How far ahead a group may ask to keep its node running on a night.
OPT_OUT_AHEAD_DAYS = 14
TERM_START = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # a term quota counts all running time


def period_start(now: dt.datetime, per: str, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """The start of the quota period holding `now`: Monday 00:00 course time for `week`, the
    beginning of the record for `term`."""
    if per == "term":
        return TERM_START
    local = now.astimezone(tz)
    monday = local.date() - dt.timedelta(days=local.weekday())
    return dt.datetime.combine(monday, dt.time(0), tzinfo=tz)


def period_end(start: dt.datetime, per: str, tz: zoneinfo.ZoneInfo) -> dt.datetime | None:
    """When the period starting at `start` ends (the next Monday 00:00, course time); a term
    quota does not reset."""
    if per == "term":
        return None
    return dt.datetime.combine(start.date() + dt.timedelta(days=7), dt.time(0), tzinfo=tz)


def quota_standing(used: float, quota: float, warn_pct: int) -> str:
    """`none` (no quota), `ok`, `warn` (at or past `warn_pct` %), or `over` (used it all)."""
    if quota <= 0:
        return "none"
    if used >= quota:
        return "over"
    if used >= quota * warn_pct / 100:
        return "warn"
    return "ok"


def shutdown_instant(night: dt.date, at: dt.time, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """The moment of the shutdown on date `night` at `at`, course time (zoneinfo resolves a
    time skipped or repeated by daylight saving to its first reading)."""
    return dt.datetime.combine(night, at, tzinfo=tz)


def last_shutdown(
    now: dt.datetime, at: dt.time, tz: zoneinfo.ZoneInfo
) -> tuple[dt.date, dt.datetime]:
    """The most recent shutdown at or before `now`: its date (course time) and its moment."""
    local = now.astimezone(tz)
    night = local.date()
    moment = shutdown_instant(night, at, tz)
    if moment > now:
        night -= dt.timedelta(days=1)
        moment = shutdown_instant(night, at, tz)
    return night, moment


def next_shutdown(
    now: dt.datetime, at: dt.time, tz: zoneinfo.ZoneInfo
) -> tuple[dt.date, dt.datetime]:
    """The next shutdown after `now`: its date (course time) and its moment."""
    night, _ = last_shutdown(now, at, tz)
    night += dt.timedelta(days=1)
    return night, shutdown_instant(night, at, tz)


def shutdown_due(now: dt.datetime, moment: dt.datetime) -> bool:
    """A shutdown is made from its moment until `SHUTDOWN_GRACE` after it."""
    return moment <= now < moment + SHUTDOWN_GRACE


def opt_out_problem(
    night: dt.date, now: dt.datetime, at: dt.time, tz: zoneinfo.ZoneInfo
) -> str | None:
    """Why a group may not ask to skip the shutdown of `night`, or None when it may."""
    moment = shutdown_instant(night, at, tz)
    when = f"{night:%a %-d %b} at {at:%H:%M} ({tz.key})"
    if moment <= now:
        return f"The shutdown of {when} has already happened; choose a later night."
    if moment - now > dt.timedelta(days=OPT_OUT_AHEAD_DAYS + 1):
        return (
            f"The shutdown of {when} is more than {OPT_OUT_AHEAD_DAYS} days away; ask again "
            "closer to that night."
        )
    return None


def activity(
    *,
    cloud_status: str,
    running_since: dt.datetime | None,
    last_sample_at: dt.datetime | None,
    last_util_max: float | None,
    idle_below: float,
    now: dt.datetime,
) -> str:
    """What the node is doing, as its page says it: `off` (not RUNNING), `unknown` (RUNNING,
    no sample for `SILENT_AFTER`), `starting` (RUNNING for less than that, no sample yet),
    `idle` or `busy` (from the last sample's busiest GPU)."""
    if cloud_status != "RUNNING":
        return "off"
    heard = last_sample_at if last_sample_at and last_sample_at >= (running_since or now) else None
    if heard is None:
        since = running_since or now
        return "unknown" if now - since >= SILENT_AFTER else "starting"
    if now - heard >= SILENT_AFTER:
        return "unknown"
    return "idle" if (last_util_max or 0) < idle_below else "busy"


def silent_since(
    *,
    cloud_status: str,
    running_since: dt.datetime | None,
    last_sample_at: dt.datetime | None,
    now: dt.datetime,
) -> dt.datetime | None:
    """When a RUNNING node was last heard from (or started running), if that is `SILENT_AFTER`
    or longer ago; None while it reports (or is not running)."""
    if cloud_status != "RUNNING":
        return None
    start = running_since or now
    heard = last_sample_at if last_sample_at and last_sample_at >= start else start
    return heard if now - heard >= SILENT_AFTER else None
