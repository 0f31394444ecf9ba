from __future__ import annotations

import datetime as dt
from typing import Any

from django import template

from apps.core.timefmt import format_date, format_instant

register = template.Library()


def _tz(course: Any) -> str:
    return getattr(course, "timezone", None) or str(course or "UTC")


@register.filter
def coursetime(value: dt.datetime | None, course: Any) -> str:
    """{{ assignment.due_at|coursetime:course }} → 'Tue Feb 10, 2026, 11:59 PM PST'."""
    if value is None:
        return ""
    return format_instant(value, _tz(course))


@register.filter
def coursedate(value: dt.datetime | None, course: Any) -> str:
    if value is None:
        return ""
    return format_date(value, _tz(course))
