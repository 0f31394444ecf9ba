"""A deadline's page (staff): every student's relief stack on one assignment — slack spent, own
and group extensions, accommodation, the effective deadline in course time, the cap left and
staff's override — paged, filtered by group and by closeness to the cap, and as CSV
(`?format=csv`, the filters applied). The API twin is `api/…/slack/deadlines/<id>/`."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.views.decorators.http import require_GET

from apps.calendar.cache import course_calendar
from apps.core.csvexport import csv_response
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.timefmt import format_instant
from apps.core.views_helpers import course_for
from apps.groups.models import Group
from apps.slackdays.stacks import (
    CAP_FILTERS,
    StackRow,
    course_assignment,
    deadline_stack_rows,
    stack_filters,
)

PAGE = 50


@login_required
@require_GET
def deadline(request: AuthedRequest, code: str, assignment_id: int) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    a = course_assignment(course, assignment_id)
    group_id, cap = stack_filters(request.GET.dict())
    rows = deadline_stack_rows(course=course, assignment=a, group_id=group_id, cap=cap)
    if request.GET.get("format") == "csv":
        return csv_response(
            f"{course.code}-{a.code}-relief.csv", itertools.chain([HEADER], _csv(course, rows))
        )
    page = Paginator(rows, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "slackdays/deadline.html",
        {
            "course": course,
            "a": a,
            "page": page,
            "rows": page.object_list,
            "count": len(rows),
            "groups": Group.objects.filter(course=course, dissolved_at__isnull=True).order_by(
                "name"
            ),
            "group_id": group_id,
            "cap": cap,
            "caps": CAP_FILTERS,
            "assignments": course_calendar(course).assignments,
        },
    )


HEADER = [
    "name",
    "email",
    "group",
    "slack days",
    "own extension hours",
    "group extension hours",
    "accommodation hours",
    "relief",
    "deadline",
    "cap days",
    "cap left hours",
    "past the cap hours",
    "override (days staff confirmed)",
]


def _csv(course: Course, rows: list[StackRow]) -> Iterator[list[object]]:
    for r in rows:
        s = r.stack
        yield [
            r.student.get_full_name(),
            r.student.email,
            r.group,
            r.slack_days,
            r.own_hours,
            r.group_hours,
            r.accommodation_hours,
            s.text,
            format_instant(s.effective, course.timezone),
            "" if s.cap_days is None else s.cap_days,
            "" if s.room_hours is None else s.room_hours,
            s.over_hours,
            r.override_days or "",
        ]
