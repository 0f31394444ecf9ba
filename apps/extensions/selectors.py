"""Reads for the extension requests page and its API twin: beside each request, the facts the
staff card shows — the student's slack days left, their deadline as it stands (effective, after
every relief) and, for an assignment, the deadline's whole relief stack."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from apps.core.models import Course
from apps.extensions.models import ExtensionRequest
from apps.slackdays import rules


@dataclass(frozen=True)
class RequestFacts:
    slack_left: int
    deadline: dt.datetime
    stack: rules.ReliefStack | None  # None for a milestone (its own group extension)


def request_facts(*, course: Course, rows: Iterable[ExtensionRequest]) -> dict[int, RequestFacts]:
    """{request id: facts} for a page of requests, in 4 queries whatever their number (the
    requests' `assignment` and `milestone` already joined)."""
    from apps.milestones.models import GroupMilestone
    from apps.slackdays.selectors import students_slack

    page = list(rows)
    slack = students_slack(course=course, student_ids={r.student_id for r in page})
    extra = {
        (g.milestone_id, g.group_id): g.extension_hours
        for g in GroupMilestone.objects.filter(
            course=course,
            group_id__in={r.group_id for r in page if r.milestone_id},
            milestone_id__in={r.milestone_id for r in page if r.milestone_id},
        )
    }
    out = {}
    for r in page:
        left, deadlines = slack[r.student_id]
        stack = None
        if r.assignment is not None:
            mine = [d for d in deadlines if d.assignment.pk == r.assignment_id]
            deadline = mine[0].effective if mine else r.assignment.due_at
            stack = mine[0].stack if mine else None
        else:
            hours = extra.get((r.milestone_id or 0, r.group_id or 0), 0)
            deadline = r.milestone.due_at + dt.timedelta(hours=hours)  # type: ignore[union-attr]
        out[r.pk] = RequestFacts(slack_left=left, deadline=deadline, stack=stack)
    return out
