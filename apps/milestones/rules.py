"""Milestone rules as pure functions: a group's deadline and status."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum


class Status(StrEnum):
    NOT_SUBMITTED = "not_submitted"
    SUBMITTED = "submitted"
    LATE = "late"
    EXCUSED = "excused"


LABELS = {
    Status.NOT_SUBMITTED: "not submitted",
    Status.SUBMITTED: "submitted",
    Status.LATE: "late",
    Status.EXCUSED: "excused",
}


def group_due(due: dt.datetime, extension_hours: int) -> dt.datetime:
    """The group's deadline: the milestone's plus its extension (real hours). No slack days."""
    return due + dt.timedelta(hours=extension_hours)


def milestone_status(
    *, due: dt.datetime, extension_hours: int, submitted_at: dt.datetime | None, excused: bool
) -> Status:
    """Excused wins; a submission after the group's deadline is late; none is not submitted."""
    if excused:
        return Status.EXCUSED
    if submitted_at is None:
        return Status.NOT_SUBMITTED
    return Status.LATE if submitted_at > group_due(due, extension_hours) else Status.SUBMITTED


def is_overdue(*, status: Status, due: dt.datetime, extension_hours: int, now: dt.datetime) -> bool:
    """Not submitted and past the group's deadline: what the staff board puts first."""
    return status == Status.NOT_SUBMITTED and now > group_due(due, extension_hours)
