"""A person's calendar as JSON, their feed URL and reminder choices, and staff lecture edits."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.calendar import services
from apps.calendar.api.serializers import LectureSerializer
from apps.calendar.api.serializers_events import (
    EventSerializer,
    FeedSerializer,
    LectureEditSerializer,
    ReminderChoiceSerializer,
)
from apps.calendar.models import CalendarSettings
from apps.calendar.registry import Event
from apps.calendar.selectors import calendar_settings_get, event_list
from apps.core.api.helpers import api_course, error_responses
from apps.core.models import Course
from apps.core.timefmt import format_date, format_instant

E = error_responses()
TAGS = ["calendar"]


def event_json(e: Event, zone: str) -> dict[str, Any]:
    """An event as the feed has it, with its start as the calendar's list writes it: in course
    time naming the zone (a day alone for an all-day event)."""
    data = asdict(e)
    data["is_deadline"] = e.is_deadline
    data["timezone"] = zone
    data["start_text"] = format_date(e.start, zone) if e.all_day else format_instant(e.start, zone)
    return data


def _instant(request: Request, name: str) -> dt.datetime | None:
    raw = request.query_params.get(name)
    if not raw:
        return None
    try:
        value = dt.datetime.fromisoformat(raw.strip().replace(" ", "+"))
    except ValueError:
        try:
            value = dt.datetime.combine(dt.date.fromisoformat(raw.strip()), dt.time(0))
        except ValueError:
            raise ValidationError(
                {name: ["Give a date (2026-02-10) or an ISO 8601 instant."]}
            ) from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


class CalendarView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your calendar: lectures, events, your own deadlines, your group's windows",
        parameters=[
            OpenApiParameter(
                "from",
                str,
                description="Only what ends at or after this (date or ISO 8601 instant).",
            ),
            OpenApiParameter(
                "to", str, description="Only what starts before this (date or ISO 8601 instant)."
            ),
        ],
        responses={200: EventSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        start, end = _instant(request, "from"), _instant(request, "to")
        if start and end and end <= start:
            raise ValidationError({"to": ["Must be after 'from'."]})
        events = event_list(course=course, user=user, start=start, end=end, for_feed=True)
        return Response([event_json(e, course.timezone) for e in events])


def _feed_json(request: Request, course: Course, row: CalendarSettings | None) -> dict[str, Any]:
    token = row.feed_token if row else None
    return {
        "url": request.build_absolute_uri(reverse("calendar:feed", kwargs={"token": token}))
        if token
        else None,
        "created_at": row.feed_created_at if row else None,
        "reminders_off": row.reminders_off if row else [],
        "reminder_hours": course.reminder_hours,
    }


class FeedView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your feed URL (null until you make one) and reminder choices",
        responses={200: FeedSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        return Response(
            _feed_json(request, course, calendar_settings_get(user=user, course=course))
        )

    @extend_schema(
        tags=TAGS,
        summary="Choose the reminders you do not want",
        request=ReminderChoiceSerializer,
        responses={200: FeedSerializer, **E},
    )
    def patch(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        data = ReminderChoiceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = services.reminders_set(
            actor=user, course=course, off=data.validated_data["reminders_off"]
        )
        return Response(_feed_json(request, course, row))

    @extend_schema(
        tags=TAGS,
        summary="Turn the feed off: its URL answers 404 at once",
        request=None,
        responses={200: FeedSerializer, **E},
    )
    def delete(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        row = services.calendar_feed_revoke(actor=user, course=course)
        return Response(_feed_json(request, course, row))


class FeedRotateView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="A new feed URL (made on first use); the old one stops at once",
        request=None,
        responses={200: FeedSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        row = services.calendar_feed_rotate(actor=user, course=course)
        return Response(_feed_json(request, course, row))


class LectureEditView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Change a lecture's title, day or guest flag (staff)",
        request=LectureEditSerializer,
        responses={200: LectureSerializer, **E},
    )
    def patch(self, request: Request, code: str, lecture_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = LectureEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        lec = services.lecture_update(
            actor=user, course=course, lecture_id=lecture_id, **data.validated_data
        )
        return Response(LectureSerializer(lec).data)
