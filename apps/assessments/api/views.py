"""Assessment API: create, import responses per administration (preview, then commit), the
report (every figure as JSON), exports, your own scores, publish, destroy the ID map."""

from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.assessments import report, services
from apps.assessments.models import Assessment, ResponseImport
from apps.core.api.helpers import api_course, error_responses
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.permissions import is_staff

E = error_responses(
    e409="A file with problems, one already stored, or a destroyed map not confirmed."
)
TAGS = ["assessments"]


class AssessmentSerializer(serializers.ModelSerializer):
    question_set_key = serializers.CharField(source="question_set.key", read_only=True)

    class Meta:
        model = Assessment
        fields = (
            "id",
            "title",
            "question_set",
            "question_set_key",
            "time_limit_minutes",
            "published_at",
            "identities_destroyed_at",
            "created_at",
        )


class AssessmentCreateSerializer(serializers.Serializer):
    question_set = serializers.IntegerField(
        help_text="The quiz's question-set id (fixed numbers for everyone)."
    )
    title = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    time_limit_minutes = serializers.IntegerField(min_value=1, max_value=180, default=5)


class AssessmentsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Assessments of the course",
        responses={200: AssessmentSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code)
        return Response(
            AssessmentSerializer(
                Assessment.objects.filter(course=course).select_related("question_set"), many=True
            ).data
        )

    @extend_schema(
        tags=TAGS,
        summary="Create an assessment (staff)",
        request=AssessmentCreateSerializer,
        responses={201: AssessmentSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        data = AssessmentCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        a = services.create(
            actor=user,
            course=course,
            question_set_id=v["question_set"],
            title=v["title"],
            time_limit_minutes=v["time_limit_minutes"],
        )
        return Response(AssessmentSerializer(a).data, status=201)


class ImportSerializer(serializers.ModelSerializer):
    class Meta:
        model = ResponseImport
        fields = ("id", "phase", "filename", "report", "created_at", "committed_at")


class ImportUploadSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(
        choices=["pre", "post"], help_text="Which administration the file holds."
    )
    file = serializers.FileField(
        help_text="CSV with a Participant ID column and q1 … (q6.1, q6.2 for parts)."
    )


class ImportsView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        tags=TAGS,
        summary="Upload responses for one administration: the preview, every problem by row and "
        "column (staff; nothing stored yet)",
        request={"multipart/form-data": ImportUploadSerializer},
        responses={201: ImportSerializer, **E},
    )
    def post(self, request: Request, code: str, assessment_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        services.get(course, assessment_id)
        data = ImportUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        f = data.validated_data["file"]
        imp = services.import_preview(
            actor=user,
            course=course,
            assessment_id=assessment_id,
            phase=data.validated_data["phase"],
            filename=f.name,
            data=f.read(services.MAX_UPLOAD + 1),
        )
        return Response(ImportSerializer(imp).data, status=201)


def _import(course: Any, assessment_id: int, batch_id: int) -> ResponseImport:
    imp = (
        ResponseImport.objects.filter(assessment=services.get(course, assessment_id), pk=batch_id)
        .defer("data")
        .first()
    )
    if imp is None:
        raise NotFound("No such import.")
    return imp


class ImportView(APIView):
    @extend_schema(
        tags=TAGS, summary="An upload's preview (staff)", responses={200: ImportSerializer, **E}
    )
    def get(self, request: Request, code: str, assessment_id: int, batch_id: int) -> Response:
        _, course = api_course(request, code, staff=True)
        return Response(ImportSerializer(_import(course, assessment_id, batch_id)).data)


class ImportCommitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Store the previewed file, all rows or none (staff; 409 if it has problems)",
        request=None,
        responses={200: ImportSerializer, **E},
    )
    def post(self, request: Request, code: str, assessment_id: int, batch_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        imp = services.import_commit(
            actor=user, course=course, assessment_id=assessment_id, import_id=batch_id
        )
        return Response(ImportSerializer(imp).data)


def _readable(request: Request, code: str, assessment_id: int) -> Assessment:
    user, course = api_course(request, code)
    a = services.get(course, assessment_id)
    if not is_staff(user, course) and not a.published_at:
        raise NotAllowed("The report is not published yet; your own scores are at …/mine/.")
    return a


class ReportView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every figure of the report (staff; students once published). NO RESEARCH "
        "participants excluded, groups under 5 suppressed",
        responses={200: OpenApiResponse(description="The report as JSON."), **E},
    )
    def get(self, request: Request, code: str, assessment_id: int) -> Response:
        return Response(report.build(_readable(request, code, assessment_id)))


class ExportView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Exports (staff): de-identified per-participant scores (csv) or the summary (json)",
        parameters=[
            OpenApiParameter(
                "as", str, enum=["csv", "json"], required=False, description="csv (default) or json"
            )
        ],
        responses={200: OpenApiResponse(description="text/csv or application/json"), **E},
    )
    def get(self, request: Request, code: str, assessment_id: int) -> HttpResponseBase:
        _, course = api_course(request, code, staff=True)
        a = services.get(course, assessment_id)
        fmt = request.query_params.get("as", "csv")
        if fmt == "json":
            return Response(report.build(a))
        if fmt != "csv":
            raise DomainError("as is csv or json.", field="as")
        return csv_response(
            f"{course.code}-assessment-{a.pk}-participants.csv", report.participants_csv_rows(a)
        )


class MyScoreSerializer(serializers.Serializer):
    phase = serializers.CharField()
    status = serializers.CharField()
    total = serializers.FloatField(allow_null=True)
    opted_out = serializers.BooleanField()
    participant = serializers.CharField(help_text="Your participant ID.")
    scores = serializers.JSONField(help_text="{question: {points, rule, misconception …}}")


class MineView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your own scores (students)",
        responses={200: MyScoreSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str, assessment_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        a = services.get(course, assessment_id)
        return Response(
            [
                {
                    "phase": r.administration.phase,
                    "status": r.status,
                    "total": r.total,
                    "opted_out": r.opted_out,
                    "participant": r.participant.code,
                    "scores": r.scores,
                }
                for r in services.own_responses(a, user)
            ]
        )


class PublishSerializer(serializers.Serializer):
    published = serializers.BooleanField(help_text="true: students see the aggregate report.")


class PublishView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Publish or hide the report (staff)",
        request=PublishSerializer,
        responses={200: AssessmentSerializer, **E},
    )
    def post(self, request: Request, code: str, assessment_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = PublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        a = services.publish(
            actor=user,
            course=course,
            assessment_id=assessment_id,
            published=data.validated_data["published"],
        )
        return Response(AssessmentSerializer(a).data)


class DestroyedSerializer(serializers.Serializer):
    links_destroyed = serializers.IntegerField()


class IdentitiesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Destroy the participant-ID → person map for good (instructors; ?confirm=true)",
        parameters=[OpenApiParameter("confirm", bool, required=False)],
        responses={200: DestroyedSerializer, **E},
    )
    def delete(self, request: Request, code: str, assessment_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        n = services.identities_destroy(
            actor=user,
            course=course,
            assessment_id=assessment_id,
            confirm=request.query_params.get("confirm") in ("1", "true"),
        )
        return Response({"links_destroyed": n})
