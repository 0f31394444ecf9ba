"""A person's events as an RFC 5545 calendar, built with `icalendar` (escaping, folding and the
VTIMEZONE are the library's, not ours).

Times are written in the course zone with TZID and a VTIMEZONE for the term's years, so a
deadline at 23:59 PDT stays 23:59 PDT in every client. A deadline is an instant (DTEND =
DTSTART, transparent, category "Deadline"), its summary starting "Due:".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import icalendar
from django.conf import settings
from django.utils import timezone

from apps.calendar.registry import Event
from apps.core.models import Course

PRODID = "-//courseops//calendar feed//EN"


def _vevent(e: Event, course: Course, stamp: dt.datetime) -> icalendar.Event:
    zone = course.tz
    v = icalendar.Event()
    v.add("uid", e.uid)
    v.add("dtstamp", stamp)
    v.add("sequence", e.sequence)
    if e.all_day:
        v.add("dtstart", e.start.astimezone(zone).date())
        end = e.end or e.start
        v.add(
            "dtend",
            max(
                end.astimezone(zone).date(), e.start.astimezone(zone).date() + dt.timedelta(days=1)
            ),
        )
    else:
        v.add("dtstart", e.start.astimezone(zone))
        v.add("dtend", (e.end or e.start).astimezone(zone))
        if e.is_deadline:
            v.add("categories", ["Deadline"])
    v.add("summary", (f"Due: {e.title}" if e.is_deadline else e.title))
    description = e.description
    if e.is_deadline:
        local = e.start.astimezone(zone)
        due = f"Due {local:%a %b} {local.day}, {local:%I:%M %p %Z}".replace(" 0", " ")
        description = f"{due}. {description}".strip()
    if e.path:
        url = settings.SITE_URL.rstrip("/") + e.path
        v.add("url", url)
        description = f"{description}\n{url}".strip()
    if description:
        v.add("description", description)
    if e.location:
        v.add("location", e.location)
    v.add("transp", "TRANSPARENT" if e.is_deadline or e.all_day else "OPAQUE")
    return v


def feed_calendar(*, course: Course, title: str, events: Iterable[Event]) -> bytes:
    stamp = timezone.now().replace(microsecond=0)
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", title)
    cal.add("x-wr-timezone", course.timezone)
    cal.add("refresh-interval", dt.timedelta(hours=1), parameters={"VALUE": "DURATION"})
    cal.add("x-published-ttl", "PT1H")
    items = list(events)
    for e in items:
        cal.add_component(_vevent(e, course, stamp))
    years = [e.start.year for e in items] or [stamp.year]
    cal.add_missing_timezones(
        first_date=dt.date(min(years) - 1, 1, 1), last_date=dt.date(max(years) + 2, 1, 1)
    )
    return cal.to_ical()
