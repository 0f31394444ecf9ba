"""Staff change an assignment's title, release or deadline through the API."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.calendar.api.deadline_views import DeadlineImpactBase, edit_payload
from apps.calendar.api.serializers import AssignmentSerializer
from apps.calendar.api.serializers_events import DeadlineEditSerializer, ImpactSerializer
from apps.calendar.models import Assignment
from apps.core.api.fields import CourseDateTimeField
from apps.core.api.helpers import api_course, error_responses
from apps.slackdays.moves import assignment_move_impact, assignment_update

E = error_responses()
TAGS = ["calendar"]


class AssignmentEditSerializer(DeadlineEditSerializer):
    title = serializers.CharField(required=False, max_length=200)
    release_at = CourseDateTimeField(required=False)


class AssignmentEditView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Change an assignment (staff); moving due_at needs confirm: true",
        request=AssignmentEditSerializer,
        responses={200: AssignmentSerializer, **E},
    )
    def patch(self, request: Request, code: str, assignment_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        v = edit_payload(request, AssignmentEditSerializer)
        a, _ = assignment_update(
            actor=user,
            course=course,
            assignment_id=assignment_id,
            title=v.get("title"),
            release_at=v.get("release_at"),
            due_at=v.get("due_at"),
            confirm=v["confirm"],
        )
        return Response(AssignmentSerializer(a).data)


class AssignmentImpactView(DeadlineImpactBase):
    load = staticmethod(lambda course, pk: Assignment.objects.filter(course=course, pk=pk).first())
    impact_of = staticmethod(
        lambda course, a, due: assignment_move_impact(course=course, assignment=a, new_due=due)
    )

    @extend_schema(
        tags=TAGS,
        summary="Who moving an assignment's deadline would affect (staff; changes nothing)",
        parameters=[
            OpenApiParameter(
                "due_at", str, required=True, description="The new deadline (ISO 8601 with offset)."
            )
        ],
        responses={200: ImpactSerializer, **E},
    )
    def get(self, request: Request, code: str, assignment_id: int) -> Response:  # type: ignore[override]
        return super().get(request, code, assignment_id=assignment_id)
