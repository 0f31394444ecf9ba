"""Reads of milestone records, scoped in one place: a student sees their own group's row of
every tracked milestone; staff see every group's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection
from django.db.models import (
    Case,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.core.models import Course, User
from apps.groups.models import Group
from apps.milestones import rules
from apps.milestones.models import GroupMilestone


@dataclass(frozen=True)
class Cell:
    """One group × milestone: what the board, the group page and the API show."""

    milestone: Milestone
    group: Group
    record: GroupMilestone | None
    status: rules.Status
    due: dt.datetime  # the group's deadline (extension applied)
    overdue: bool

    @property
    def label(self) -> str:
        return "overdue" if self.overdue else rules.LABELS[self.status]

    @property
    def css(self) -> str:
        return "overdue" if self.overdue else self.status.value


def tracked_milestones(*, course: Course) -> list[Milestone]:
    return list(Milestone.objects.filter(course=course, tracked=True).order_by("due_at", "key"))


def cell(m: Milestone, group: Group, rec: GroupMilestone | None, now: dt.datetime) -> Cell:
    ext = rec.extension_hours if rec else 0
    status = rules.milestone_status(
        due=m.due_at,
        extension_hours=ext,
        submitted_at=rec.submitted_at if rec else None,
        excused=bool(rec and rec.excused),
    )
    return Cell(
        m,
        group,
        rec,
        status,
        rules.group_due(m.due_at, ext),
        rules.is_overdue(status=status, due=m.due_at, extension_hours=ext, now=now),
    )


def cells_for_groups(
    *, course: Course, groups: Iterable[Group], milestones: list[Milestone] | None = None
) -> dict[int, list[Cell]]:
    """group id → its cells, one per tracked milestone (one query for the records)."""
    groups = list(groups)
    milestones = tracked_milestones(course=course) if milestones is None else milestones
    records = {
        (r.group_id, r.milestone_id): r
        for r in GroupMilestone.objects.filter(
            course=course, group__in=groups, milestone__in=milestones
        ).select_related("submitted_by")
    }
    now = timezone.now()
    return {g.pk: [cell(m, g, records.get((g.pk, m.pk)), now) for m in milestones] for g in groups}


def group_of(*, course: Course, user: User) -> Group | None:
    return Group.objects.filter(
        course=course,
        memberships__user=user,
        memberships__left_at__isnull=True,
        dissolved_at__isnull=True,
    ).first()


def board_groups(*, course: Course, q: str = "", status: str = "") -> QuerySet[Group]:
    """Live groups for the staff board, the ones with late or overdue milestones first, then by
    name; `q` searches group names, `status` keeps groups with at least one cell of it."""
    now = timezone.now()
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True)
    if q:
        groups = groups.filter(name__icontains=q)
    late_ids = _groups_with(course=course, status="late", now=now)
    overdue_ids = _groups_with(course=course, status="overdue", now=now)
    if status in {"late", "overdue"}:
        groups = groups.filter(pk__in=late_ids if status == "late" else overdue_ids)
    elif status in {"submitted", "excused"}:
        groups = groups.filter(pk__in=_groups_with(course=course, status=status, now=now))
    trouble = Q(pk__in=late_ids) | Q(pk__in=overdue_ids)
    return groups.annotate(
        trouble=Case(When(trouble, then=Value(0)), default=Value(1), output_field=IntegerField())
    ).order_by("trouble", "name")


def _extension() -> ExpressionWrapper:
    """A record's extension as a duration. PostgreSQL multiplies an interval; SQLite (`make
    run`) has no interval type and stores durations as microseconds, so it gets the integer."""
    native = connection.features.has_native_duration_field
    hour = dt.timedelta(hours=1) if native else 3_600_000_000
    return ExpressionWrapper(F("extension_hours") * hour, output_field=DurationField())


def _groups_with(*, course: Course, status: str, now: dt.datetime) -> QuerySet[Group]:
    """A subquery of group ids with at least one tracked milestone in `status` (SQL only)."""
    rows = GroupMilestone.objects.filter(course=course, milestone__tracked=True).annotate(
        group_due=F("milestone__due_at") + _extension()
    )
    if status == "excused":
        return rows.filter(excused=True).values("group_id")  # type: ignore[return-value]
    if status == "late":
        return rows.filter(excused=False, submitted_at__gt=F("group_due")).values("group_id")  # type: ignore[return-value]
    if status == "submitted":
        return rows.filter(excused=False, submitted_at__lte=F("group_due")).values("group_id")  # type: ignore[return-value]
    # overdue: a past-due tracked milestone with no submission and no excuse, counting groups
    # that have no record at all for it
    past = Milestone.objects.filter(course=course, tracked=True, due_at__lt=now)
    done = rows.filter(Q(submitted_at__isnull=False) | Q(excused=True) | Q(group_due__gte=now))
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True)
    overdue = Q(pk__in=[])
    for m in past:
        overdue |= ~Q(pk__in=done.filter(milestone=m).values("group_id"))
    return groups.filter(overdue).values("pk")  # type: ignore[return-value]
