from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render

from apps.calendar.selectors import deadline_list, lecture_list
from apps.core.http import AuthedRequest
from apps.core.selectors import course_get


@login_required
def schedule(request: AuthedRequest, code: str) -> HttpResponse:
    """The whole term on one page: lectures, recess, assignments and milestones by date."""
    course = course_get(user=request.user, code=code)
    request.course = course
    return render(
        request,
        "calendar/schedule.html",
        {
            "course": course,
            "lectures": lecture_list(course=course),
            "recess_days": course.recess_days.all(),
            "deadlines": deadline_list(course=course, user=request.user),
        },
    )
