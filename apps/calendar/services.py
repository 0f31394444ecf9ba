"""Writes of the calendar app: feed tokens, reminder choices, lecture edits.

Each service owns its transaction and writes an audit row; deadlines are moved by the apps that
own them (`slackdays.services.assignment_update`, `milestones.services.milestone_update`).
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from apps.calendar.models import CalendarSettings, Lecture
from apps.calendar.registry import REMINDER_KINDS
from apps.calendar.rules import with_same_time
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_member, is_staff
from apps.core.services import audit_record


def _settings_locked(user: User, course: Course) -> CalendarSettings:
    row, _ = CalendarSettings.objects.get_or_create(user=user, course=course)
    return CalendarSettings.objects.select_for_update().get(pk=row.pk)


def calendar_feed_get_or_create(*, actor: User, course: Course) -> CalendarSettings:
    """The person's feed settings, with a token made on first use."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course have a calendar feed.")
    row = CalendarSettings.objects.filter(user=actor, course=course).first()
    if row is not None and row.feed_key:
        return row
    with transaction.atomic():
        row = _settings_locked(actor, course)
        if not row.feed_key:
            row.new_token()
            row.feed_created_at = timezone.now()
            row.save(update_fields=["feed_key", "feed_secret", "feed_created_at"])
    return row


def calendar_feed_rotate(*, actor: User, course: Course) -> CalendarSettings:
    """A new secret URL; the old one answers 404 from this moment. Audited."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course have a calendar feed.")
    with transaction.atomic():
        row = _settings_locked(actor, course)
        row.new_token()
        row.feed_created_at = timezone.now()
        row.save(update_fields=["feed_key", "feed_secret", "feed_created_at"])
        audit_record(actor=actor, action="calendar.feed_rotated", course=course, obj=row)
    return row


def calendar_feed_revoke(*, actor: User, course: Course) -> CalendarSettings:
    """No feed URL at all until the person makes a new one. Audited."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course have a calendar feed.")
    with transaction.atomic():
        row = _settings_locked(actor, course)
        row.feed_key, row.feed_secret, row.feed_created_at = None, "", None
        row.save(update_fields=["feed_key", "feed_secret", "feed_created_at"])
        audit_record(actor=actor, action="calendar.feed_revoked", course=course, obj=row)
    return row


def reminders_set(*, actor: User, course: Course, off: list[str]) -> CalendarSettings:
    """Which kinds of reminder the person does not want (the rest are sent)."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course get reminders.")
    unknown = sorted(set(off) - set(REMINDER_KINDS))
    if unknown:
        raise DomainError(
            f"Unknown reminder kind(s): {', '.join(unknown)}; the kinds are "
            f"{', '.join(REMINDER_KINDS)}.",
            field="reminders_off",
        )
    with transaction.atomic():
        row = _settings_locked(actor, course)
        row.reminders_off = sorted(set(off))
        row.save(update_fields=["reminders_off"])
    return row


def lecture_update(
    *,
    actor: User,
    course: Course,
    lecture_id: int,
    title: str | None = None,
    date: dt.date | None = None,
    is_guest: bool | None = None,
) -> Lecture:
    """Staff change a lecture's title, day (same time of day, course zone) or guest flag.
    Locks the lecture, bumps its revision (the feed's SEQUENCE) and audits before → after."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs edit the calendar.")
    with transaction.atomic():
        lec = Lecture.objects.select_for_update().filter(course=course, pk=lecture_id).first()
        if lec is None:
            raise NotFound("No such lecture in this course.")
        before = {
            "title": lec.title,
            "starts_at": lec.starts_at.isoformat(),
            "is_guest": lec.is_guest,
        }
        if title is not None:
            if not title.strip():
                raise DomainError("A lecture needs a title.", field="title")
            lec.title = title.strip()[:200]
        if date is not None:
            if course.recess_days.filter(date=date).exists():
                raise DomainError(f"{date:%b} {date.day} is a recess day.", field="date")
            for other in Lecture.objects.filter(course=course).exclude(pk=lec.pk):
                if other.starts_at.astimezone(course.tz).date() == date:
                    raise DomainError(f"L{other.number} is already on that day.", field="date")
            length = lec.ends_at - lec.starts_at
            lec.starts_at = with_same_time(lec.starts_at, date, course.tz)
            lec.ends_at = lec.starts_at + length
        if is_guest is not None:
            lec.is_guest = is_guest
        after = {
            "title": lec.title,
            "starts_at": lec.starts_at.isoformat(),
            "is_guest": lec.is_guest,
        }
        if after != before:
            lec.revision += 1
            lec.save()
            audit_record(
                actor=actor,
                action="lecture.updated",
                course=course,
                obj=lec,
                before=before,
                after=after,
            )
    return lec
