"""Participation API: events (students their own; staff all, record and remove), every student's
summary (staff), CSV imports (preview, commit)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.fields import CourseDateField
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.models import User
from apps.participation import selectors, services
from apps.participation.models import KINDS, ParticipationEvent, ParticipationImport

E = error_responses(
    e409="Already marked present that day or checked in to this lecture, no check-in is open, "
    "the code expired, or the import has problems or was stored."
)
TAGS = ["participation"]


class ParticipationEventSerializer(serializers.ModelSerializer):
    student = serializers.EmailField(source="student.email", read_only=True)

    class Meta:
        model = ParticipationEvent
        fields = ("id", "student", "kind", "occurred_on", "note", "created_at")


class ParticipationEventInSerializer(serializers.Serializer):
    student = serializers.EmailField()
    kind = serializers.ChoiceField(choices=KINDS)
    occurred_on = CourseDateField()
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class EventsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Participation events (students: their own; staff: all, ?student=e-mail)",
        parameters=[OpenApiParameter("student", str, required=False), *PAGE_PARAMETERS],
        responses={200: paginated(ParticipationEventSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = selectors.event_list(user=user, course=course)
        if request.query_params.get("student"):
            qs = qs.filter(student__email__iexact=request.query_params["student"])
        return page_response(
            request, qs, lambda page: ParticipationEventSerializer(page, many=True).data
        )

    @extend_schema(
        tags=TAGS,
        summary="Record one event (staff)",
        request=ParticipationEventInSerializer,
        responses={201: ParticipationEventSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ParticipationEventInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        e = services.event_record(
            actor=user,
            course=course,
            student_email=d["student"],
            kind=d["kind"],
            occurred_on=d["occurred_on"],
            note=d["note"],
        )
        return Response(ParticipationEventSerializer(e).data, status=201)


class EventView(APIView):
    @extend_schema(
        tags=TAGS, summary="Remove an event (staff)", request=None, responses={204: None, **E}
    )
    def delete(self, request: Request, code: str, event_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        services.event_delete(actor=user, course=course, event_id=event_id)
        return Response(status=204)


class ParticipationSummarySerializer(serializers.Serializer):
    student = serializers.EmailField()
    name = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    lectures_held = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True)


class SummaryView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every student's counts per kind and score (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(ParticipationSummarySerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        students = User.objects.filter(
            memberships__course=course, memberships__role="student", memberships__is_active=True
        ).order_by("full_name", "email")

        def render(page: list[Any]) -> list[dict[str, Any]]:
            sums = selectors.summaries(course, [u.pk for u in page])
            return [
                {
                    "student": u.email,
                    "name": u.full_name,
                    "counts": sums[u.pk].counts,
                    "lectures_held": sums[u.pk].held,
                    "score": sums[u.pk].score,
                }
                for u in page
            ]

        return page_response(request, students, render)


class ParticipationImportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    filename = serializers.CharField()
    committed_at = serializers.DateTimeField(allow_null=True)
    ok = serializers.BooleanField()
    events = serializers.IntegerField(help_text="Rows that would be (or were) stored.")
    problems = serializers.ListField(
        child=serializers.CharField(), help_text="Each with its row and column."
    )


def _import(course: Any, record: ParticipationImport) -> dict[str, Any]:
    plan = services.import_plan(course=course, data=bytes(record.content))
    return {
        "id": record.pk,
        "filename": record.filename,
        "committed_at": record.committed_at,
        "ok": plan.ok and record.committed_at is None,
        "events": record.added or len(plan.events),
        "problems": [str(p) for p in plan.problems] if record.committed_at is None else [],
    }


class ParticipationUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV: email (or sid), kind, date (YYYY-MM-DD), note.")


class ImportsView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        tags=TAGS,
        summary="Upload events as CSV: the preview (staff; nothing stored yet)",
        request={"multipart/form-data": ParticipationUploadSerializer},
        responses={201: ParticipationImportSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ParticipationUploadSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        f = s.validated_data["file"]
        record, _ = services.import_upload(
            actor=user, course=course, filename=f.name, data=f.read(services.MAX_BYTES + 1)
        )
        return Response(_import(course, record), status=201)


class ImportView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="An upload's preview (staff)",
        responses={200: ParticipationImportSerializer, **E},
    )
    def get(self, request: Request, code: str, import_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        return Response(
            _import(course, services.import_get(actor=user, course=course, import_id=import_id))
        )


class ImportCommitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Store the previewed events, all or none (staff)",
        request=None,
        responses={200: ParticipationImportSerializer, **E},
    )
    def post(self, request: Request, code: str, import_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        services.import_commit(actor=user, course=course, import_id=import_id)
        return Response(
            _import(course, services.import_get(actor=user, course=course, import_id=import_id))
        )


class CheckinEntrySerializer(serializers.Serializer):
    student = serializers.EmailField()
    name = serializers.CharField()
    at = serializers.DateTimeField(help_text="ISO 8601 in course time.")
    at_text = serializers.CharField(help_text="`at` as the page writes it, the zone named.")


class CheckinStateSerializer(serializers.Serializer):
    open = serializers.BooleanField()
    lecture = serializers.IntegerField(allow_null=True, help_text="The lecture's number.")
    closes_at = serializers.DateTimeField(allow_null=True)
    checked_in_at = serializers.DateTimeField(
        allow_null=True, help_text="When you checked in to it (students)."
    )
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    closes_at_text = serializers.CharField(
        allow_null=True, help_text="`closes_at` as the page writes it, the zone named."
    )
    shown_lecture = serializers.IntegerField(
        allow_null=True,
        help_text="Staff: the lecture whose check-ins the page lists (the open one, else the "
        "last opened); students: null.",
    )
    checkins = CheckinEntrySerializer(
        many=True,
        help_text="Staff: who checked in to `shown_lecture`, first first, 50 a page (?page=); "
        "students: [].",
    )
    checkins_count = serializers.IntegerField(help_text="Staff: everyone checked in to it.")
    checkins_next_page = serializers.IntegerField(
        allow_null=True, help_text="The `page` with the next 50, if any."
    )


class CheckinInSerializer(serializers.Serializer):
    code = serializers.CharField(max_length=20, help_text="The digits shown in the room.")


CHECKINS_PAGE = 50  # as the staff page pages them


def _state(course: Any, user: Any, page: int = 1) -> dict[str, Any]:
    """The check-in as its page shows it: to staff also the check-ins of the session the page
    lists (the open one, else the last opened), `page` of them, in course time with the zone
    named."""
    from apps.core.permissions import is_staff
    from apps.core.timefmt import format_instant, to_course_tz
    from apps.participation.checkin import open_session
    from apps.participation.models import Checkin, CheckinSession

    zone, page = course.timezone, max(page, 1)
    session = open_session(course)
    mine = Checkin.objects.filter(session=session, student=user).first() if session else None
    shown, entries, count = None, [], 0
    if is_staff(user, course):
        shown = (
            session
            or CheckinSession.objects.filter(course=course)
            .select_related("lecture")
            .order_by("-opened_at")
            .first()
        )
        if shown is not None:
            everyone = Checkin.objects.filter(session=shown)
            count = everyone.count()
            first = (page - 1) * CHECKINS_PAGE
            entries = [
                {
                    "student": c.student.email,
                    "name": c.student.get_full_name() or c.student.email,
                    "at": to_course_tz(c.at, zone).isoformat(),
                    "at_text": format_instant(c.at, zone),
                }
                for c in everyone.select_related("student").order_by("at", "pk")[
                    first : first + CHECKINS_PAGE
                ]
            ]
    return {
        "open": session is not None,
        "lecture": session.lecture.number if session else None,
        "closes_at": session.closes_at if session else None,
        "checked_in_at": mine.at if mine else None,
        "timezone": zone,
        "closes_at_text": format_instant(session.closes_at, zone) if session else None,
        "shown_lecture": shown.lecture.number if shown else None,
        "checkins": entries,
        "checkins_count": count,
        "checkins_next_page": page + 1 if page * CHECKINS_PAGE < count else None,
    }


class CheckinView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Whether a lecture check-in is open now, and whether you checked in to it "
        "(staff: who checked in, as the check-in page lists them)",
        parameters=[
            OpenApiParameter(
                "page", int, required=False, description="Staff: the check-ins' page, 50 each."
            )
        ],
        responses={200: CheckinStateSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        page = request.query_params.get("page", "1")
        return Response(_state(course, user, int(page) if page.isdigit() else 1))

    @extend_schema(
        tags=TAGS,
        summary="Check in with the code shown in the room (students; once per lecture)",
        request=CheckinInSerializer,
        responses={201: CheckinStateSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        from apps.participation.checkin import check_in

        user, course = api_course(request, code, student=True)
        s = CheckinInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        check_in(actor=user, course=course, code=s.validated_data["code"])
        return Response(_state(course, user), status=201)
