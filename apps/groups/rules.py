"""The course's group rules as pure functions of plain values."""

from __future__ import annotations

import datetime as dt
import re

JOIN_CODE_RE = re.compile(r"[^A-Z0-9]")


def normalize_join_code(code: str) -> str:
    """'abcd-2345 ' → 'ABCD2345': codes are read aloud and pasted with stray characters."""
    return JOIN_CODE_RE.sub("", code.upper())


def formation_open(*, now: dt.datetime, deadline: dt.datetime | None) -> bool:
    """Students may form, join, leave and rename until the formation deadline (inclusive)."""
    return deadline is None or now <= deadline


def can_join(*, size: int, max_size: int) -> bool:
    return size < max_size


def size_status(*, size: int, min_size: int, max_size: int) -> str:
    if size < min_size:
        return "under"
    if size >= max_size:
        return "full"
    return "ok"


def clean_group_name(name: str) -> str:
    """Collapse whitespace; names are compared case-insensitively by the service."""
    return " ".join(name.split())
