"""Regrade requests over the API: students ask and read their own; staff read the queue and
decide (re-score with points, or decline with points null), the same rules as the pages."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import regrades
from apps.autograder.models import Question, QuestionSet, RegradeRequest
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import NotFound
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant

E = error_responses()
TAGS = ["autograder"]


class RegradeSerializer(serializers.ModelSerializer):
    question = serializers.CharField(source="question.key")
    question_set = serializers.CharField(source="question.question_set.key")
    student = serializers.EmailField(source="student.email")
    part = serializers.SerializerMethodField()
    # What the staff queue page writes beside each request (#68: the API says what the page says)
    question_set_title = serializers.CharField(source="question.question_set.title")
    question_points = serializers.FloatField(source="question.points")
    student_name = serializers.CharField(source="student.get_full_name")
    status_label = serializers.CharField(source="get_status_display")
    decided_by = serializers.SerializerMethodField()
    timezone = serializers.SerializerMethodField()
    created_at_text = serializers.SerializerMethodField()
    decided_at_text = serializers.SerializerMethodField()

    class Meta:
        model = RegradeRequest
        fields = (
            "id",
            "question_set",
            "question",
            "part",
            "student",
            "reason",
            "status",
            "old_points",
            "new_points",
            "comment",
            "created_at",
            "decided_at",
            "question_set_title",
            "question_points",
            "student_name",
            "status_label",
            "decided_by",
            "timezone",
            "created_at_text",
            "decided_at_text",
        )

    def get_decided_by(self, r: RegradeRequest) -> str | None:
        """Who decided it, as the page names them; null while open."""
        return None if r.decided_by is None else str(r.decided_by)

    def get_timezone(self, r: RegradeRequest) -> str:
        """The course's zone, in which the `*_text` times are written."""
        return str(self.context.get("zone") or r.question.question_set.course.timezone)

    def get_created_at_text(self, r: RegradeRequest) -> str:
        """`created_at` as the page writes it, in course time with the zone named."""
        return format_instant(r.created_at, self.get_timezone(r))

    def get_decided_at_text(self, r: RegradeRequest) -> str | None:
        return None if r.decided_at is None else format_instant(r.decided_at, self.get_timezone(r))

    def get_part(self, r: RegradeRequest) -> int | None:
        """1-based, as the pages number parts; null: the whole question."""
        return None if r.part is None else r.part + 1


class AskSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="Question key, e.g. q7.")
    part = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="1-based part; omit: the question."
    )
    reason = serializers.CharField(max_length=2000, help_text="What was graded wrong and why.")


class DecideSerializer(serializers.Serializer):
    points = serializers.FloatField(
        allow_null=True, min_value=0, help_text="New points; null declines (the points stand)."
    )
    comment = serializers.CharField(max_length=2000, help_text="Why, for the student's e-mail.")


class AskView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Ask for a regrade of one released question (student)",
        description="409 before release, after the regrade window, or with one already open.",
        request=AskSerializer,
        responses={201: RegradeSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, course = api_course(request, code, student=True)
        qs = QuestionSet.objects.filter(course=course, key=key).first()
        if qs is None:
            raise NotFound("No such question set.")
        regrades.require_open(qs)
        d = AskSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        q = Question.objects.filter(question_set=qs, key=d.validated_data["question"]).first()
        if q is None:
            raise NotFound("No such question in this set.", field="question")
        part = d.validated_data.get("part")
        r = regrades.request_create(
            actor=user,
            question=q,
            reason=d.validated_data["reason"],
            part=part - 1 if part else None,
        )
        return Response(RegradeSerializer(r).data, status=201)


class ListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Regrade requests: staff see the course's queue, oldest first; students their own",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter(
                "status", str, enum=["open", "rescored", "declined"], description="Default: all."
            ),
        ],
        responses={200: paginated(RegradeSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        status = request.query_params.get("status", "")
        if status not in {"", "open", "rescored", "declined"}:
            status = ""
        rows = regrades.queue(course, status=status)
        if not is_staff(user, course):
            rows = rows.filter(student=user)
        return page_response(
            request,
            rows,
            lambda page: RegradeSerializer(page, many=True, context={"zone": course.timezone}).data,
        )


class DecideView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Re-score or decline a regrade request (staff); the student is e-mailed",
        request=DecideSerializer,
        responses={200: RegradeSerializer, **E},
    )
    def post(self, request: Request, code: str, request_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        d = DecideSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        r = regrades.decide(
            actor=user,
            course=course,
            request_id=request_id,
            points=d.validated_data["points"],
            comment=d.validated_data["comment"],
        )
        return Response(RegradeSerializer(r).data)
