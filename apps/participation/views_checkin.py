"""Check-in pages: a student types the room's code (on their phone, also from Today's box);
staff open check-in for the lecture under way, show the code full-screen in the room (the page
reloads itself every 5 s, no script), close it, and correct a check-in."""

from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.calendar.models import Lecture
from apps.core import doors
from apps.core.errors import DomainError, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import (
    course_action,
    course_for,
    errors_as_messages,
    form_kept,
    int_or_none,
)
from apps.participation import checkin
from apps.participation.models import Checkin, CheckinSession


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    now = timezone.now()
    session = checkin.open_session(course, now)
    if not is_staff(request.user, course):
        return _student_page(request, course, session)
    day = timezone.localtime(now, course.tz).date()
    lectures = list(
        Lecture.objects.filter(
            course=course,
            starts_at__lt=now + dt.timedelta(days=1),
            ends_at__gt=now - dt.timedelta(days=1),
        ).order_by("starts_at")
    )
    openable = [
        lec for lec in lectures if lec.starts_at - checkin.EARLY <= now < lec.ends_at + checkin.LATE
    ]
    sessions = list(
        CheckinSession.objects.filter(course=course)
        .select_related("lecture")
        .order_by("-opened_at")[:5]
    )
    shown = session or (sessions[0] if sessions else None)
    tries = Paginator(checkin.wrong_tries(shown) if shown else Checkin.objects.none(), 20).get_page(
        request.GET.get("tries_page")
    )
    entries = Paginator(
        Checkin.objects.filter(session=shown).select_related("student").order_by("at", "pk")
        if shown
        else Checkin.objects.none(),
        50,
    ).get_page(request.GET.get("page"))
    return render(
        request,
        "participation/checkin_staff.html",
        {
            "course": course,
            "session": session,
            "openable": openable,
            "lectures": lectures,
            "sessions": sessions,
            "shown": shown,
            "entries": entries,
            "tries": tries,
            "tries_limit": doors.limit_of(doors.CHECKIN_CODE).tries,
            "day": day,
        },
    )


def _student_page(
    request: AuthedRequest, course: Course, session: CheckinSession | None, status: int = 200
) -> HttpResponse:
    mine = (
        Checkin.objects.filter(session=session, student=request.user).first() if session else None
    )
    return render(
        request,
        "participation/checkin_student.html",
        {
            "course": course,
            "session": session,
            "mine": mine,
            "digits": checkin.DIGITS,
            "kept": form_kept(request, "checkin"),
        },
        status=status,
    )


@course_action(student=True)
def enter(request: AuthedRequest, course: Course) -> HttpResponseBase:
    try:
        with errors_as_messages(request, form="checkin", field_ids={"code": "checkin-code"}):
            try:
                c = checkin.check_in(
                    actor=request.user, course=course, code=request.POST.get("code", "")
                )
            except doors.TooManyTries as exc:
                raise _Limited(exc) from None
            messages.success(request, f"Checked in to L{c.session.lecture.number}. Thank you!")
    except _Limited as limited:
        # Past the door's limit: 429 with the page and its reason, not a redirect to try again.
        messages.error(request, limited.exc.message, extra_tags="refused-too_many_tries")
        response = _student_page(request, course, checkin.open_session(course), status=429)
        response["Retry-After"] = str(limited.exc.retry_after)
        return response
    back = request.POST.get("next", "")
    if back == "today":
        return redirect("core:dashboard", code=course.code)
    return redirect("participation:checkin", code=course.code)


class _Limited(Exception):
    """Carries a TooManyTries past `errors_as_messages`, which turns refusals into redirects."""

    def __init__(self, exc: doors.TooManyTries) -> None:
        self.exc = exc


@course_action(staff=True)
def session_open(request: AuthedRequest, course: Course) -> HttpResponseBase:
    with errors_as_messages(request):
        lecture_id = int_or_none(request.POST.get("lecture"))
        if lecture_id is None:
            raise DomainError("Choose a lecture.", field="lecture")
        s = checkin.session_open(actor=request.user, course=course, lecture_id=lecture_id)
        messages.success(request, f"Check-in for L{s.lecture.number} is open; show the code.")
        return redirect("participation:checkin-screen", code=course.code, session_id=s.pk)
    return redirect("participation:checkin", code=course.code)


@course_action(staff=True)
def session_close(request: AuthedRequest, course: Course, session_id: int) -> HttpResponseBase:
    with errors_as_messages(request):
        s = checkin.session_close(actor=request.user, course=course, session_id=session_id)
        messages.success(request, f"Check-in for L{s.lecture.number} closed.")
    return redirect("participation:checkin", code=course.code)


@course_action(staff=True)
def entry_remove(request: AuthedRequest, course: Course, checkin_id: int) -> HttpResponseBase:
    with errors_as_messages(request):
        checkin.checkin_remove(actor=request.user, course=course, checkin_id=checkin_id)
        messages.success(request, "Check-in removed, with the attendance mark it made.")
    return redirect("participation:checkin", code=course.code)


@login_required
@require_GET
def screen(request: AuthedRequest, code: str, session_id: int) -> HttpResponse:
    """The code, large, for the room's projector; the page reloads every 5 seconds."""
    course = course_for(request, code, staff=True)
    session = (
        CheckinSession.objects.filter(course=course, pk=session_id)
        .select_related("lecture")
        .first()
    )
    if session is None:
        raise NotFound("No such check-in session.")
    now = timezone.now()
    live = session.opened_at <= now < session.closes_at
    return render(
        request,
        "participation/checkin_screen.html",
        {
            "course": course,
            "session": session,
            "live": live,
            "code": checkin.code_at(session, now) if live else "",
            "left": checkin.seconds_left(now),
            "count": session.checkins.count(),
        },
    )
