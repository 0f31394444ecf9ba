"""Slack-day API. A student sees their own ledger and their deadlines; staff see everyone's and
grant exceptions, refund, adjust and import lateness."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.fields import CourseTimeTextField, CourseZoneField
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.api.serializers import FieldsOnceModelSerializer
from apps.core.compiled import compiled_query
from apps.core.errors import DomainError, NotFound
from apps.slackdays import services
from apps.slackdays.lateness import lateness_run, lateness_upload
from apps.slackdays.models import DeadlineException, LatenessImport, LedgerEntry
from apps.slackdays.selectors import (
    balance_page,
    balance_rows,
    exception_list,
    ledger_list,
    ledger_of,
    student_slack_full,
)

E = error_responses(e409="Refused by a rule (no days left, already used, deadline passed).")
TAGS = ["slack days"]


_ctx = api_course


class LedgerEntrySerializer(FieldsOnceModelSerializer):
    assignment = serializers.CharField(source="assignment.code", allow_null=True, default=None)
    student = serializers.EmailField(source="account.student.email")
    actor = serializers.EmailField(source="actor.email", allow_null=True, default=None)

    class Meta:
        model = LedgerEntry
        fields = (
            "seq",
            "student",
            "kind",
            "delta",
            "balance_after",
            "assignment",
            "actor",
            "reason",
            "created_at",
        )


class DeadlineSerializer(serializers.Serializer):
    assignment = serializers.CharField(source="assignment.code")
    assignment_id = serializers.IntegerField(source="assignment.pk")
    title = serializers.CharField(source="assignment.title")
    base = serializers.DateTimeField()
    extension_hours = serializers.IntegerField()
    accommodation_hours = serializers.IntegerField()
    slack_days = serializers.IntegerField()
    effective = serializers.DateTimeField(
        help_text="base + exceptions + slack; the deadline that counts."
    )
    can_apply = serializers.BooleanField()
    can_cancel = serializers.BooleanField()
    assignment_title = serializers.CharField(source="assignment.title")
    timezone = CourseZoneField()
    base_text = CourseTimeTextField(source="base", help_text="`base` as the page writes it.")
    effective_text = CourseTimeTextField(
        source="effective", help_text="`effective` in course time, as the page writes it."
    )
    relief = serializers.CharField(
        source="stack.text", help_text="The deadline's relief in words (slack, extensions, …)."
    )
    cap_days = serializers.IntegerField(
        source="stack.cap_days", allow_null=True, help_text="The cap on relief (null: none)."
    )
    cap_left_hours = serializers.IntegerField(
        source="stack.room_hours", allow_null=True, help_text="Relief hours still allowed."
    )
    cap_left = serializers.CharField(source="stack.room_text", help_text="The same, in words.")
    over_cap_hours = serializers.IntegerField(
        source="stack.over_hours", help_text="Relief past the cap, held at it."
    )


class MySlackSerializer(serializers.Serializer):
    balance = serializers.IntegerField()
    allowance = serializers.IntegerField()
    timezone = serializers.CharField(help_text="The course's zone, which the texts name.")
    deadlines = DeadlineSerializer(many=True)
    ledger = LedgerEntrySerializer(many=True)


class AssignmentRefSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(help_text="Assignment id.")


class BalanceSerializer(serializers.Serializer):
    student_id = serializers.IntegerField(source="student.pk")
    email = serializers.EmailField(source="student.email")
    name = serializers.CharField(source="student.full_name")
    group = serializers.CharField()
    balance = serializers.IntegerField()
    allowance = serializers.IntegerField()
    used = serializers.ListField(child=serializers.CharField())


class ExceptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = DeadlineException
        fields = (
            "id",
            "kind",
            "assignment",
            "student",
            "group",
            "hours",
            "reason",
            "created_at",
            "revoked_at",
        )


class GrantSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=DeadlineException.Kind.choices)
    hours = serializers.IntegerField(min_value=1, max_value=1440)
    reason = serializers.CharField(max_length=300)
    assignment = serializers.IntegerField(required=False, help_text="For an extension.")
    students = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Student ids (bulk)."
    )
    group = serializers.IntegerField(required=False, help_text="For a group extension.")
    over_cap = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Confirm granting past the course's relief cap (audited).",
    )


class StaffLedgerSerializer(serializers.Serializer):
    student = serializers.IntegerField()
    assignment = serializers.IntegerField(required=False)
    delta = serializers.IntegerField(required=False)
    reason = serializers.CharField(max_length=300)


class MySlackView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your balance, deadlines (base → effective) and ledger",
        responses={200: MySlackSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        balance, allowance, deadlines = student_slack_full(course=course, student=user)
        return Response(
            {
                "balance": balance,
                "allowance": allowance,
                "deadlines": DeadlineSerializer(
                    deadlines, many=True, context={"timezone": course.timezone}
                ).data,
                "timezone": course.timezone,
                "ledger": LedgerEntrySerializer(
                    compiled_query("slack.me.ledger", ledger_of, course.pk, user.pk), many=True
                ).data,
            }
        )


class ApplyView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Apply a slack day for your whole group",
        description="409 names every member who is out of days; nothing is charged then.",
        request=AssignmentRefSerializer,
        responses={201: LedgerEntrySerializer(many=True), **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, student=True)
        data = AssignmentRefSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entries = services.slack_apply(
            actor=user, course=course, assignment_id=data.validated_data["assignment"]
        )
        return Response(LedgerEntrySerializer(entries, many=True).data, status=201)


class CancelView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Cancel your group's slack day before the original deadline",
        description="The refund entries, one per member of the group (at most six): a list.",
        request=AssignmentRefSerializer,
        responses={200: LedgerEntrySerializer(many=True), **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, student=True)
        data = AssignmentRefSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(
            LedgerEntrySerializer(
                services.slack_cancel(
                    actor=user, course=course, assignment_id=data.validated_data["assignment"]
                ),
                many=True,
            ).data
        )


class BalancesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every student's balance (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(BalanceSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = _ctx(request, code, staff=True)
        rows = balance_rows(course=course)
        return page_response(
            request, rows, lambda p: BalanceSerializer(balance_page(p, course), many=True).data
        )


class LedgerView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="The ledger: staff see all (filter ?student=id); a student only their own",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter("student", int, description="Staff: one student's entries (user id)."),
        ],
        responses={200: paginated(LedgerEntrySerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        sid = request.query_params.get("student", "")
        qs = ledger_list(user=user, course=course, student_id=int(sid) if sid.isdigit() else None)
        return page_response(request, qs, lambda p: LedgerEntrySerializer(p, many=True).data)


class RefundView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Refund a student's slack day on an assignment (staff)",
        request=StaffLedgerSerializer,
        responses={200: LedgerEntrySerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        d = StaffLedgerSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        if "assignment" not in d.validated_data:
            raise DomainError("Name the assignment.", field="assignment")
        e = services.slack_refund(
            actor=user,
            course=course,
            student_id=d.validated_data["student"],
            assignment_id=d.validated_data["assignment"],
            reason=d.validated_data["reason"],
        )
        return Response(LedgerEntrySerializer(e).data)


class AdjustView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Adjust a balance with a reason (staff)",
        request=StaffLedgerSerializer,
        responses={200: LedgerEntrySerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        d = StaffLedgerSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        e = services.slack_adjust(
            actor=user,
            course=course,
            student_id=d.validated_data["student"],
            delta=d.validated_data.get("delta", 0),
            reason=d.validated_data["reason"],
        )
        return Response(LedgerEntrySerializer(e).data)


class ExceptionsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Exceptions in force (staff all; a student their own and their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(ExceptionSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        qs = exception_list(user=user, course=course)
        qs = qs.order_by("-created_at", "-id")
        return page_response(request, qs, lambda p: ExceptionSerializer(p, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Grant exceptions (staff; bulk with many students)",
        request=GrantSerializer,
        responses={201: ExceptionSerializer(many=True), **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        d = GrantSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        v: dict[str, Any] = d.validated_data
        made = services.exception_grant(
            actor=user,
            course=course,
            kind=v["kind"],
            hours=v["hours"],
            reason=v["reason"],
            assignment_id=v.get("assignment"),
            student_ids=v.get("students", []),
            group_id=v.get("group"),
            over_cap=v.get("over_cap", False),
        )
        return Response(ExceptionSerializer(made, many=True).data, status=201)


class LatenessImportView(APIView):
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(
        tags=TAGS,
        summary="Upload a Gradescope export and get the preview (staff)",
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "assignment": {"type": "integer"},
                    "file": {"type": "string", "format": "binary"},
                },
            }
        },
        responses={201: OpenApiResponse(description="{id, summary, problems, outcomes}"), **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        upload = request.FILES.get("file")
        if upload is None or not str(request.POST.get("assignment", "")).isdigit():
            raise DomainError("Send the form fields 'assignment' (id) and 'file'.", field="file")
        record = lateness_upload(
            actor=user,
            course=course,
            assignment_id=int(request.POST["assignment"]),
            filename=upload.name or "export.csv",
            data=upload.read(),
        )
        report = lateness_run(actor=user, record=record, commit=False)
        return Response(
            {
                "id": record.pk,
                "summary": report.summary(),
                "problems": report.problems,
                "outcomes": [o.__dict__ for o in report.outcomes],
            },
            status=201,
        )


class LatenessCommitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Commit a lateness import, all or nothing (staff)",
        request=None,
        responses={200: OpenApiResponse(description="{summary, outcomes}"), **E},
    )
    def post(self, request: Request, code: str, import_id: int) -> Response:
        user, course = _ctx(request, code, staff=True)
        record = LatenessImport.objects.filter(course=course, pk=import_id).first()
        if record is None:
            raise NotFound("No such import.")
        report = lateness_run(actor=user, record=record, commit=True)
        return Response(
            {"summary": report.summary(), "outcomes": [o.__dict__ for o in report.outcomes]}
        )
