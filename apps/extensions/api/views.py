"""Extension requests API: a student asks (JSON; a supporting document goes through the page)
and lists their own; staff list the queue and approve or decline."""

from __future__ import annotations

import zoneinfo

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant
from apps.extensions import services
from apps.extensions.models import ExtensionRequest
from apps.extensions.selectors import RequestFacts, request_facts

E = error_responses(
    e409="Requests for this deadline have closed, one is already open, or it was already decided."
)
TAGS = ["extensions"]


class ExtensionAskedSerializer(serializers.ModelSerializer):
    student = serializers.EmailField(source="student.email", read_only=True)
    group = serializers.CharField(source="group.name", read_only=True, allow_null=True)
    target = serializers.CharField(source="target_name", read_only=True)
    has_document = serializers.SerializerMethodField()
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    slack_left = serializers.SerializerMethodField(help_text="The student's slack days left.")
    deadline = serializers.SerializerMethodField(
        help_text="The student's deadline as it stands (every relief applied), ISO 8601 in the "
        "course's zone."
    )
    deadline_text = serializers.SerializerMethodField(
        help_text="The same deadline in words, the zone named (as the page shows it)."
    )
    relief = serializers.SerializerMethodField(
        help_text="The deadline's whole relief in words (slack, own and group extensions, "
        "accommodation); null for a milestone."
    )
    cap_days = serializers.SerializerMethodField(help_text="The relief cap (null: none).")
    cap_left_hours = serializers.SerializerMethodField(help_text="Relief hours still allowed.")
    cap_left = serializers.SerializerMethodField(help_text="The same, in words.")
    over_cap_hours = serializers.SerializerMethodField(help_text="Relief past the cap, held.")

    class Meta:
        model = ExtensionRequest
        fields = (
            "id",
            "student",
            "group",
            "assignment",
            "milestone",
            "target",
            "days",
            "reason",
            "dsp",
            "has_document",
            "status",
            "status_label",
            "relief_note",
            "slack_left",
            "deadline",
            "deadline_text",
            "relief",
            "cap_days",
            "cap_left_hours",
            "cap_left",
            "over_cap_hours",
            "approved_days",
            "auto",
            "comment",
            "created_at",
            "decided_at",
        )
        read_only_fields = fields

    def get_has_document(self, obj: ExtensionRequest) -> bool:
        return bool(obj.document_kind)

    def _facts(self, obj: ExtensionRequest) -> RequestFacts:
        facts = self.context.get("facts")
        if facts is None or obj.pk not in facts:  # one request (an answer to a write)
            facts = request_facts(course=self._course(obj), rows=[obj])
        return facts[obj.pk]

    def _course(self, obj: ExtensionRequest) -> Course:
        return self.context.get("course") or obj.course

    def get_slack_left(self, obj: ExtensionRequest) -> int:
        return self._facts(obj).slack_left

    def get_deadline(self, obj: ExtensionRequest) -> str:
        tz = zoneinfo.ZoneInfo(self._course(obj).timezone)
        return self._facts(obj).deadline.astimezone(tz).isoformat()

    def get_deadline_text(self, obj: ExtensionRequest) -> str:
        return format_instant(self._facts(obj).deadline, self._course(obj).timezone)

    def get_relief(self, obj: ExtensionRequest) -> str | None:
        stack = self._facts(obj).stack
        return None if stack is None else stack.text

    def get_cap_days(self, obj: ExtensionRequest) -> int | None:
        stack = self._facts(obj).stack
        return None if stack is None else stack.cap_days

    def get_cap_left_hours(self, obj: ExtensionRequest) -> int | None:
        stack = self._facts(obj).stack
        return None if stack is None else stack.room_hours

    def get_cap_left(self, obj: ExtensionRequest) -> str | None:
        stack = self._facts(obj).stack
        return None if stack is None else stack.room_text

    def get_over_cap_hours(self, obj: ExtensionRequest) -> int:
        stack = self._facts(obj).stack
        return 0 if stack is None else stack.over_hours


class ExtensionAskSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(
        required=False, allow_null=True, help_text="The assignment's id (or give `milestone`)."
    )
    milestone = serializers.IntegerField(
        required=False, allow_null=True, help_text="A milestone's id: always for your group."
    )
    days = serializers.IntegerField(help_text="Days after your current deadline.")
    reason = serializers.CharField(max_length=2000)
    for_group = serializers.BooleanField(
        required=False, default=False, help_text="Group work: move every member's deadline."
    )
    dsp = serializers.BooleanField(
        required=False, default=False, help_text="A DSP accommodation beyond the standing one."
    )


class RequestsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Extension requests (students: their own; staff: the course's, oldest first)",
        parameters=[
            OpenApiParameter(
                "status",
                str,
                required=False,
                enum=["open", "approved", "declined", "closed"],
                description="Only requests in this state.",
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(ExtensionAskedSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        rows = ExtensionRequest.objects.filter(course=course).select_related(
            "student", "group", "assignment", "milestone"
        )
        if not is_staff(user, course):
            rows = rows.filter(student=user)
        status = request.query_params.get("status", "")
        if status in {"open", "approved", "declined", "closed"}:
            rows = rows.filter(status=status)
        return page_response(
            request,
            rows.order_by("created_at", "pk"),
            lambda page: (
                ExtensionAskedSerializer(
                    page,
                    many=True,
                    context={"course": course, "facts": request_facts(course=course, rows=page)},
                ).data
            ),
        )

    @extend_schema(
        tags=TAGS,
        summary="Ask for an extension (students; the course's rule may approve it at once)",
        request=ExtensionAskSerializer,
        responses={201: ExtensionAskedSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        s = ExtensionAskSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        r = services.request_create(
            actor=user,
            course=course,
            days=d["days"],
            reason=d["reason"],
            assignment_id=d.get("assignment"),
            milestone_id=d.get("milestone"),
            for_group=d["for_group"],
            dsp=d["dsp"],
        )
        return Response(ExtensionAskedSerializer(r).data, status=201)


class ExtensionDecideSerializer(serializers.Serializer):
    approve = serializers.BooleanField(help_text="true approves, false declines.")
    days = serializers.IntegerField(
        required=False, allow_null=True, help_text="Approve other days than asked (1–30)."
    )
    comment = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        default="",
        help_text="Required to decline or to grant other days; e-mailed to the student.",
    )
    over_cap = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Confirm granting past the course's relief cap on this deadline (audited).",
    )


class DecideView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Approve (optionally with other days) or decline a request (staff)",
        request=ExtensionDecideSerializer,
        responses={200: ExtensionAskedSerializer, **E},
    )
    def post(self, request: Request, code: str, request_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ExtensionDecideSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        r = services.decide(actor=user, course=course, request_id=request_id, **s.validated_data)
        return Response(ExtensionAskedSerializer(r).data)


class WithdrawView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Withdraw your open request (students)",
        request=None,
        responses={200: ExtensionAskedSerializer, **E},
    )
    def post(self, request: Request, code: str, request_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        r = services.withdraw(actor=user, course=course, request_id=request_id)
        return Response(ExtensionAskedSerializer(r).data)
