from __future__ import annotations

import datetime as dt
from typing import Any

from django import template
from django.utils.html import format_html

from apps.core.timefmt import format_clock, format_date, format_instant, format_short

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


@register.filter
def courseclock(value: dt.datetime | None, course: Any) -> str:
    """{{ slot.ends_at|courseclock:course }} → '1:30 PM' (the day is on the page already)."""
    if value is None:
        return ""
    return format_clock(value, _tz(course))


@register.filter
def courseinput(value: dt.datetime | None, course: Any) -> str:
    """The value of a `datetime-local` input in course time ('2026-04-22T23:59'), so a form
    saved unchanged keeps the instant it showed."""
    if value is None:
        return ""
    from zoneinfo import ZoneInfo

    return value.astimezone(ZoneInfo(_tz(course))).strftime("%Y-%m-%dT%H:%M")


@register.filter
def coursewhen(value: dt.datetime | None, course: Any) -> str:
    """An instant for a table cell: the full form on a laptop, one short line on a phone
    ('Tue Feb 10, 11:59 PM'; the full form stays in the tooltip and `datetime`)."""
    if value is None:
        return ""
    full = format_instant(value, _tz(course))
    return format_html(
        '<time datetime="{}" title="{}"><span class="d-long">{}</span><span '
        'class="d-short">{}</span></time>',
        value.isoformat(),
        full,
        full,
        format_short(value, _tz(course)),
    )


@register.filter
def age(value: dt.timedelta | None) -> str:
    """A job's age in the largest unit that reads well: '45 s', '12 min', '3 h 5 min', '2 d'."""
    if value is None:
        return ""
    s = int(value.total_seconds())
    if s < 120:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 48 * 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d"
