"""The milestones app's calendar entries: a student's group deadlines (extension applied, status
in the description), every milestone's base date for staff, and reminders for groups that have
not yet recorded a submission."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet
from django.urls import reverse

from apps.calendar.cache import course_calendar
from apps.calendar.models import Milestone
from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.core.compiled import compiled_query
from apps.core.models import Course
from apps.groups.models import GroupMembership
from apps.groups.selectors import current_group_id
from apps.milestones import rules
from apps.milestones.models import GroupMilestone


def _event(
    m: Milestone,
    course: Course,
    *,
    due: dt.datetime,
    extra: int = 0,
    status: str = "",
    note: str = "",
    staff: bool = False,
) -> Event:
    description = " · ".join(x for x in (note, m.notes) if x)
    return Event(
        uid=uid("milestone", m.pk, course.code),
        kind="milestone",
        code=m.key,
        title=m.name,
        start=due,
        description=description,
        path=f"/c/{course.code}/milestones/",
        sequence=m.revision + extra,
        reminder_kind="milestone" if m.tracked else "",
        status=status,
        edit_path=reverse(
            "milestones:milestone-edit", kwargs={"code": course.code, "milestone_id": m.pk}
        )
        if staff
        else "",  # only staff's events link to the edit form (a student's many never reverse)
    )


def _group_records(course_id: int, group_id: int) -> QuerySet[Any]:
    return (
        GroupMilestone.objects.filter(
            course_id=course_id, group_id=group_id, group__dissolved_at__isnull=True
        )
        .order_by()
        .values("milestone_id", "extension_hours", "submitted_at", "excused")
    )


def group_records(course_id: int, group_id: int, memo: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """milestone id → the group's record (extension, submitted_at, excused), read once per
    `memo` (a request's: the dashboard's deadlines and its Today list share it)."""
    key = f"milestone_records:{course_id}:{group_id}"
    if key not in memo:
        memo[key] = {
            r["milestone_id"]: dict(r)
            for r in compiled_query("milestones.group_records", _group_records, course_id, group_id)
        }
    records: dict[int, dict[str, Any]] = memo[key]
    return records


def record_status(m: Milestone, rec: dict[str, Any]) -> tuple[rules.Status, int]:
    """The group's status for a tracked milestone and its extension in hours, from its record
    as `group_records` gives it ({} when the group has none)."""
    ext = rec.get("extension_hours") or 0
    status = rules.milestone_status(
        due=m.due_at,
        extension_hours=ext,
        submitted_at=rec.get("submitted_at"),
        excused=bool(rec.get("excused")),
    )
    return status, ext


def milestone_events(query: EventQuery) -> Iterable[Event]:
    """Staff: every milestone's base date. A student: their group's deadline and status (the
    milestones from the course's cached calendar, the group's records in one query)."""
    course = query.course
    milestones = course_calendar(course).milestones
    if query.staff:
        yield from (_event(m, course, due=m.due_at, staff=True) for m in milestones)
        return
    gid = current_group_id(course=course, user=query.user, memo=query.memo)
    records = group_records(course.pk, gid, query.memo) if gid is not None else {}
    for m in milestones:
        if not m.tracked:
            yield _event(m, course, due=m.due_at)
            continue
        status, ext = record_status(m, records.get(m.pk, {}))
        note = f"Your group: {rules.LABELS[status]}" + (f" (extension +{ext} h)" if ext else "")
        # an extension changes the group's event: its SEQUENCE grows with it
        yield _event(
            m,
            course,
            due=rules.group_due(m.due_at, ext),
            extra=1 if ext else 0,
            status=status.value,
            note=note,
        )


def milestone_reminders(
    course: Course, start: dt.datetime, end: dt.datetime
) -> Iterable[tuple[int, Event]]:
    """(member, event) for every tracked milestone a group has not recorded nor been excused
    from, due (extension applied) in [start, end). Three queries for the whole course."""
    longest = dt.timedelta(hours=24 * 30)  # extensions are at most 30 days
    milestones = list(
        Milestone.objects.filter(
            course=course, tracked=True, due_at__lt=end, due_at__gte=start - longest
        )
    )
    if not milestones:
        return
    records = {
        (r.group_id, r.milestone_id): r
        for r in GroupMilestone.objects.filter(milestone__in=milestones)
    }
    members = list(
        GroupMembership.objects.filter(
            course=course, left_at__isnull=True, group__dissolved_at__isnull=True
        ).values_list("group_id", "user_id")
    )
    for m in milestones:
        for group_id, user_id in members:
            rec = records.get((group_id, m.pk))
            if rec is not None and (rec.submitted_at is not None or rec.excused):
                continue
            due = rules.group_due(m.due_at, rec.extension_hours if rec else 0)
            if start <= due < end:
                yield user_id, _event(m, course, due=due)
