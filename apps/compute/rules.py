"""Compute rules as pure functions: regions, fair allocation order, sharing-window policy."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence


def region_of_zone(zone: str) -> str:
    """'us-central1-a' → 'us-central1'."""
    return zone.rsplit("-", 1)[0]


def pair_free(
    groups: Sequence[str], nodes: Sequence[str], ips: Sequence[str]
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Pair groups with free nodes and IPs in the given (stable) order. Returns the pairs and,
    when there are too few, the groups left without (then nothing should be allocated)."""
    n = min(len(groups), len(nodes), len(ips))
    return list(zip(groups[:n], nodes[:n], ips[:n], strict=True)), list(groups[n:])


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
