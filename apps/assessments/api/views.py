"""Assessment API: create, import responses per administration (preview, then commit), the
report (every figure as JSON), exports, your own scores, publish, destroy the ID map."""

from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
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


class OpenFormSerializer(serializers.Serializer):
    phase = serializers.CharField()
    closes_at = serializers.DateTimeField(allow_null=True, help_text="ISO 8601 in course time.")
    closes_at_text = serializers.CharField(
        allow_null=True, help_text="`closes_at` as the page writes it, the zone named."
    )


class OwnScoreSerializer(serializers.Serializer):
    phase = serializers.CharField()
    phase_label = serializers.CharField(help_text="The phase in the page's words.")
    status = serializers.CharField()
    status_label = serializers.CharField(help_text="The status in the page's words.")
    total = serializers.FloatField(allow_null=True)


class AssessmentSerializer(serializers.ModelSerializer):
    """An assessment as the list page shows it: with its quiz's title and, to a student, the
    forms open to them now and their own scores (context `open` and `mine`, by id)."""

    question_set_key = serializers.CharField(source="question_set.key", read_only=True)
    question_set_title = serializers.CharField(source="question_set.title", read_only=True)
    timezone = serializers.CharField(source="course.timezone", read_only=True)
    open_forms = serializers.SerializerMethodField(
        help_text="Students: the in-app forms open now (staff: [])."
    )
    mine = serializers.SerializerMethodField(help_text="Students: your own scores (staff: []).")

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
            "question_set_title",
            "timezone",
            "open_forms",
            "mine",
        )

    @extend_schema_field(OpenFormSerializer(many=True))
    def get_open_forms(self, a: Assessment) -> list[dict[str, Any]]:
        return list(self.context.get("open", {}).get(a.pk, []))

    @extend_schema_field(OwnScoreSerializer(many=True))
    def get_mine(self, a: Assessment) -> list[dict[str, Any]]:
        return list(self.context.get("mine", {}).get(a.pk, []))


def _list_context(course: Any, user: Any, assessments: list[Assessment]) -> dict[str, Any]:
    """What a student's list page says beside each assessment: the forms open now (until when,
    in course time with the zone named) and their own scores. Staff: nothing."""
    from django.utils import timezone

    from apps.core.timefmt import format_instant, to_course_tz

    if is_staff(user, course):
        return {}
    zone, now = course.timezone, timezone.now()
    return {
        "open": {
            a.pk: [
                {
                    "phase": adm.phase,
                    "closes_at": to_course_tz(adm.closes_at, zone).isoformat()
                    if adm.closes_at
                    else None,
                    "closes_at_text": format_instant(adm.closes_at, zone)
                    if adm.closes_at
                    else None,
                }
                for adm in a.administrations.all()
                if adm.opens_at
                and adm.opens_at <= now
                and (not adm.closes_at or now <= adm.closes_at)
            ]
            for a in assessments
        },
        "mine": {
            a.pk: [
                {
                    "phase": r.administration.phase,
                    "phase_label": r.administration.get_phase_display(),
                    "status": r.status,
                    "status_label": r.get_status_display(),
                    "total": r.total,
                }
                for r in services.own_responses(a, user)
            ]
            for a in assessments
        },
    }


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
        user, course = api_course(request, code)
        assessments = list(
            Assessment.objects.filter(course=course)
            .select_related("question_set", "course")
            .prefetch_related("administrations")
        )
        return Response(
            AssessmentSerializer(
                assessments, many=True, context=_list_context(course, user, assessments)
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
        a = _readable(request, code, assessment_id)
        return Response(report.build(a) | {"administrations": _administrations(a)})


def _administrations(a: Assessment) -> list[dict[str, Any]]:
    """Each administration's in-app form window as the assessment's page shows it (course time
    with the zone named; no `opens_at`: closed); its responses in the study are `counts`."""
    from apps.core.timefmt import format_instant, to_course_tz

    zone = a.course.timezone

    def when(v: Any) -> tuple[str | None, str | None]:
        return (to_course_tz(v, zone).isoformat(), format_instant(v, zone)) if v else (None, None)

    out = []
    for adm in a.administrations.order_by("phase"):
        (opens, opens_text), (closes, closes_text) = when(adm.opens_at), when(adm.closes_at)
        out.append(
            {
                "phase": adm.phase,
                "phase_label": adm.get_phase_display(),
                "timezone": zone,
                "opens_at": opens,
                "opens_at_text": opens_text,
                "closes_at": closes,
                "closes_at_text": closes_text,
            }
        )
    return out


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
    phase_label = serializers.CharField(help_text="The phase in the page's words.")
    status_label = serializers.CharField(help_text="The status in the page's words.")


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
                    "phase_label": r.administration.get_phase_display(),
                    "status_label": r.get_status_display(),
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
