"""Instants are stored in UTC and shown in the course's zone, always with its abbreviation."""

from __future__ import annotations

import datetime as dt
import zoneinfo

COURSE_YEARS = range(2000, 2101)  # every date a course holds; far past the last, short of 9999
OUT_OF_RANGE = "Give a date between the years 2000 and 2100."


def to_course_tz(value: dt.datetime, tz_name: str) -> dt.datetime:
    return value.astimezone(zoneinfo.ZoneInfo(tz_name))


def format_instant(value: dt.datetime, tz_name: str) -> str:
    """'Tue Feb 10, 2026, 11:59 PM PST' — unambiguous to a reader in any zone."""
    local = to_course_tz(value, tz_name)
    hour = local.strftime("%I").lstrip("0")
    return f"{local:%a %b} {local.day}, {local.year}, {hour}:{local:%M %p} {local.tzname()}"


def format_short(value: dt.datetime, tz_name: str) -> str:
    """'Tue Feb 10, 11:59 PM' — one line on a phone; the year and zone are on the page."""
    local = to_course_tz(value, tz_name)
    hour = local.strftime("%I").lstrip("0")
    return f"{local:%a %b} {local.day}, {hour}:{local:%M %p}"


def format_date(value: dt.datetime, tz_name: str) -> str:
    local = to_course_tz(value, tz_name)
    return f"{local:%a %b} {local.day}"


def format_clock(value: dt.datetime, tz_name: str) -> str:
    """'1:15 PM' — a time of day, when the day is already on the page."""
    local = to_course_tz(value, tz_name)
    return f"{local.strftime('%I').lstrip('0')}:{local:%M %p}"
