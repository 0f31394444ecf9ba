"""Compute rules as pure functions: the sharing-window policy and half-open overlap."""

from __future__ import annotations

import datetime as dt


def window_problems(
    *, start: dt.datetime, end: dt.datetime, now: dt.datetime, max_hours: int
) -> list[str]:
    """Why a sharing window [start, end) is not acceptable; empty when it is."""
    problems = []
    if end <= start:
        problems.append("The window must end after it starts.")
    if start <= now:
        problems.append("The window must start in the future.")
    if end - start > dt.timedelta(hours=max_hours):
        problems.append(f"A window is at most {max_hours} hours.")
    return problems


def overlaps(
    a_start: dt.datetime, a_end: dt.datetime, b_start: dt.datetime, b_end: dt.datetime
) -> bool:
    """Half-open intervals: back-to-back windows do not overlap."""
    return a_start < b_end and b_start < a_end
