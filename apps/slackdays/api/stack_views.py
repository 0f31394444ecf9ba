"""A deadline's relief, read-only (staff): the API twin of the deadline's page, the same rows,
filters and facts (`apps.slackdays.stacks`)."""

from __future__ import annotations

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
from apps.core.timefmt import format_instant
from apps.slackdays.stacks import (
    CAP_FILTERS,
    StackRow,
    course_assignment,
    deadline_stack_rows,
    stack_filters,
)

TAGS = ["slack days"]


class StackRowSerializer(serializers.Serializer):
    student_id = serializers.IntegerField(source="student.pk")
    email = serializers.EmailField(source="student.email")
    name = serializers.CharField(source="student.full_name")
    group = serializers.CharField(help_text="The student's current group ('' without one).")
    group_id = serializers.IntegerField(allow_null=True)
    slack_days = serializers.IntegerField()
    own_extension_hours = serializers.IntegerField(source="own_hours")
    group_extension_hours = serializers.IntegerField(source="group_hours")
    accommodation_hours = serializers.IntegerField()
    relief = serializers.CharField(source="stack.text", help_text="The relief in words.")
    counted_hours = serializers.IntegerField(source="stack.counted_hours")
    effective = serializers.SerializerMethodField(
        help_text="The deadline that counts, ISO 8601 in the course's zone (offset included)."
    )
    effective_text = serializers.SerializerMethodField(
        help_text="The same deadline in words, the zone named (as the page shows it)."
    )
    timezone = serializers.SerializerMethodField()
    cap_days = serializers.IntegerField(source="stack.cap_days", allow_null=True)
    cap_left_hours = serializers.IntegerField(source="stack.room_hours", allow_null=True)
    cap_left = serializers.CharField(source="stack.room_text")
    over_cap_hours = serializers.IntegerField(
        source="stack.over_hours", help_text="Relief past the cap, held at it."
    )
    override_days = serializers.IntegerField(
        allow_null=True, help_text="The total staff confirmed past the course's cap, or null."
    )

    def _tz(self) -> str:
        return str(self.context["timezone"])

    def get_effective(self, row: StackRow) -> str:
        import zoneinfo

        return row.stack.effective.astimezone(zoneinfo.ZoneInfo(self._tz())).isoformat()

    def get_effective_text(self, row: StackRow) -> str:
        return format_instant(row.stack.effective, self._tz())

    def get_timezone(self, row: StackRow) -> str:
        return self._tz()


class DeadlineStacksView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every student's relief on one assignment (staff; the deadline's page)",
        parameters=[
            OpenApiParameter("group", int, required=False, description="One group's members."),
            OpenApiParameter(
                "cap",
                str,
                required=False,
                enum=[k for k in CAP_FILTERS if k],
                description="over: past the course's cap; near: 2 days or less left.",
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(StackRowSerializer), **error_responses()},
    )
    def get(self, request: Request, code: str, assignment_id: int) -> Response:
        _, course = api_course(request, code, staff=True)
        a = course_assignment(course, assignment_id)
        group_id, cap = stack_filters(request.query_params.dict())
        rows = deadline_stack_rows(course=course, assignment=a, group_id=group_id, cap=cap)
        context = {"timezone": course.timezone}
        return page_response(
            request, rows, lambda page: StackRowSerializer(page, many=True, context=context).data
        )
