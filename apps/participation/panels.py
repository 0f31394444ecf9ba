"""Today's check-in box: shown to a student only while a lecture's check-in is open."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.core.models import Course, Role
from apps.participation import checkin
from apps.participation.models import Checkin, CheckinSession


def checkin_box(request: HttpRequest, course: Course, role: Role) -> dict[str, Any] | None:
    pk = checkin.open_session_id(course)  # the cache: no query outside lectures
    if pk is None:
        return None
    session = CheckinSession.objects.select_related("lecture").filter(pk=pk).first()
    if session is None:
        return None
    mine = Checkin.objects.filter(session=session, student_id=request.user.pk).first()
    return {"session": session, "mine": mine, "digits": checkin.DIGITS, "next": "today"}
