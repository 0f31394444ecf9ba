"""Gradebook API: components and cut-offs (instructors change them), scores (staff set, clear
and bulk-set them, all or nothing), score imports (preview, commit), every student's grade
(staff, paged), your own grade with a what-if (students), exports, freezing."""

from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
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
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError, NotAllowed
from apps.core.permissions import is_instructor
from apps.gradebook import rules, selectors, services
from apps.gradebook.models import ScoreEntry, ScoreImport
from apps.gradebook.sources import SOURCE_HELP, blend_help

E = error_responses(e409="Grades are frozen, or the import has problems or was already stored.")
TAGS = ["gradebook"]


class GradebookComponentSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField(read_only=True)
    parent = serializers.CharField(  # type: ignore[assignment]
        read_only=True, allow_null=True, help_text="The component this is a part of."
    )
    weight = serializers.FloatField(required=False, help_text="Percent of the course grade.")
    satisfactory_threshold = serializers.FloatField(
        required=False, help_text="Minimum percent; 0 is not checked."
    )
    source = serializers.ChoiceField(
        choices=list(SOURCE_HELP),
        required=False,  # type: ignore[assignment]
        help_text="Where scores come from: "
        + "; ".join(f"{k}: {v}" for k, v in SOURCE_HELP.items()),
    )
    source_text = serializers.CharField(
        read_only=True,
        help_text="Where its scores come from, as the components page says it: its parts, "
        "a blend's shares, or the source's description.",
    )


class LetterCutoffSerializer(serializers.Serializer):
    letter = serializers.CharField(max_length=3)
    min = serializers.FloatField(
        min_value=0, max_value=100, help_text="Lowest total (percent) for the letter."
    )


class GradebookComponentsSerializer(serializers.Serializer):
    components = GradebookComponentSerializer(many=True, required=False)
    letter_cutoffs = LetterCutoffSerializer(many=True, required=False, help_text="Highest first.")
    frozen = serializers.BooleanField(read_only=True)


def _components_data(course: Any) -> dict[str, Any]:
    comps = selectors.components_of(course)
    keys = {c.pk: c.key for c in comps}
    parents = {c.parent_id for c in comps if c.parent_id}

    def source_text(c: Any) -> str:
        if c.blend:
            return blend_help(c.blend)
        return "its parts" if c.pk in parents else SOURCE_HELP.get(c.source, c.source)

    return {
        "components": [
            {
                "key": c.key,
                "name": c.name,
                "parent": keys.get(c.parent_id or 0),
                "weight": float(c.weight),
                "satisfactory_threshold": float(c.satisfactory_threshold),
                "source": c.source,
                "source_text": source_text(c),
            }
            for c in comps
        ],
        "letter_cutoffs": [{"letter": x, "min": y} for x, y in selectors.cutoffs_of(course)],
        "frozen": selectors.freeze_of(course) is not None,
    }


def _instructor(request: Request, code: str) -> tuple[Any, Any]:
    """Instructors only, checked before the body is read (a TA learns nothing from validation)."""
    user, course = api_course(request, code, staff=True)
    if not is_instructor(user, course):
        raise NotAllowed("Only instructors may change weights, cut-offs or freeze grades.")
    return user, course


class ComponentsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Components, weights, thresholds, sources and letter cut-offs (members)",
        responses={200: GradebookComponentsSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code)
        return Response(_components_data(course))

    @extend_schema(
        tags=TAGS,
        summary="Change weights, thresholds, sources or cut-offs, all or nothing (instructors; "
        "weights that do not add up are refused with the sum)",
        request=GradebookComponentsSerializer,
        responses={200: GradebookComponentsSerializer, **E},
    )
    def put(self, request: Request, code: str) -> Response:
        user, course = _instructor(request, code)
        s = GradebookComponentsSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        cutoffs = (
            [(c["letter"], c["min"]) for c in d["letter_cutoffs"]]
            if "letter_cutoffs" in d
            else None
        )
        services.components_update(
            actor=user, course=course, changes=d.get("components", []), cutoffs=cutoffs
        )
        return Response(_components_data(course))


class ScoreEntrySerializer(serializers.ModelSerializer):
    component = serializers.CharField(source="component.key")
    student = serializers.EmailField(source="student.email", allow_null=True, default=None)
    group = serializers.IntegerField(source="group_id", allow_null=True)
    percent = serializers.FloatField()

    class Meta:
        model = ScoreEntry
        fields = ("id", "component", "student", "group", "percent", "note", "updated_at")


class ScoreEntryInSerializer(serializers.Serializer):
    component = serializers.CharField(
        max_length=40, help_text="A component's or part's key (a leaf)."
    )
    student = serializers.EmailField(
        required=False, allow_blank=True, default="", help_text="The student's e-mail…"
    )
    group = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="…or a group's id."
    )
    percent = serializers.CharField(
        allow_null=True,
        allow_blank=True,
        max_length=20,
        help_text="85, 85 %, 17/20; null or empty clears the score.",
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)


class ScoreEntriesInSerializer(serializers.Serializer):
    scores = ScoreEntryInSerializer(many=True, help_text="Stored all together or not at all.")


class ScoreCountsSerializer(serializers.Serializer):
    set = serializers.IntegerField()
    cleared = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ScoresView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Entered scores (staff; computed ones are in students/)",
        parameters=[OpenApiParameter("component", str, required=False), *PAGE_PARAMETERS],
        responses={200: paginated(ScoreEntrySerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        qs = (
            ScoreEntry.objects.filter(course=course)
            .select_related("component", "student")
            .order_by("pk")
        )
        if request.query_params.get("component"):
            qs = qs.filter(component__key=request.query_params["component"])
        return page_response(request, qs, lambda page: ScoreEntrySerializer(page, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Set or clear scores, all or nothing; every change audited (staff)",
        request=ScoreEntriesInSerializer,
        responses={200: ScoreCountsSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ScoreEntriesInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        changes, errors = [], {}
        for i, x in enumerate(s.validated_data["scores"]):
            try:
                changes.append(
                    services.score_change(
                        course=course,
                        component_key=x["component"],
                        percent=x["percent"],
                        note=x["note"],
                        student_email=x["student"],
                        group_id=x["group"],
                    )
                )
            except DomainError as exc:
                errors[f"scores[{i}].{exc.field or 'score'}"] = [exc.message]
        if errors:  # every bad row at once; nothing stored
            raise serializers.ValidationError(errors)
        return Response(services.scores_apply(actor=user, course=course, changes=changes))


class ScoreImportProblemSerializer(serializers.Serializer):
    row = serializers.IntegerField(allow_null=True)
    column = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class ScoreImportChangeSerializer(serializers.Serializer):
    who = serializers.CharField()
    component = serializers.CharField()
    old = serializers.FloatField(allow_null=True)
    new = serializers.FloatField(allow_null=True)


class ScoreImportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    filename = serializers.CharField()
    committed_at = serializers.DateTimeField(allow_null=True)
    summary = serializers.DictField(child=serializers.IntegerField())
    ok = serializers.BooleanField()
    problems = ScoreImportProblemSerializer(many=True)
    notes = serializers.ListField(child=serializers.CharField())
    changes = ScoreImportChangeSerializer(
        many=True, help_text="At most 500 are listed; `changes_count` has them all."
    )
    changes_count = serializers.IntegerField()
    unchanged = serializers.IntegerField()


def _import_data(course: Any, record: ScoreImport) -> dict[str, Any]:
    plan = services.import_plan(
        course=course, data=bytes(record.content), component_key=record.component_key
    )
    return {
        "id": record.pk,
        "filename": record.filename,
        "committed_at": record.committed_at,
        "summary": record.summary,
        "ok": plan.ok,
        "notes": plan.notes,
        "unchanged": plan.unchanged,
        "problems": [
            {"row": p.row, "column": p.column, "message": p.message} for p in plan.problems
        ],
        "changes": [
            {"who": c.who, "component": c.component.key, "old": old, "new": c.percent}
            for c, old in plan.changes[:500]
        ],
        "changes_count": len(plan.changes),
    }


class ScoreImportUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="CSV: email, sid or group, then one column per component key or name; or "
        "Gradescope's score export as downloaded (then give `component`)."
    )
    component = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=60,
        help_text="For a Gradescope export: the component key its Total Score is for.",
    )


class ImportsView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        tags=TAGS,
        summary="Upload a score CSV: the preview with every problem by row and column (staff; "
        "nothing stored yet)",
        request={"multipart/form-data": ScoreImportUploadSerializer},
        responses={201: ScoreImportSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ScoreImportUploadSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        f = s.validated_data["file"]
        record, _ = services.import_upload(
            actor=user,
            course=course,
            filename=f.name,
            data=f.read(services.imports.MAX_BYTES + 1),
            component_key=s.validated_data.get("component", ""),
        )
        return Response(_import_data(course, record), status=201)


class ImportView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="An upload's preview (staff)",
        responses={200: ScoreImportSerializer, **E},
    )
    def get(self, request: Request, code: str, import_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        return Response(
            _import_data(
                course, services.import_get(actor=user, course=course, import_id=import_id)
            )
        )


class ImportCommitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Store the previewed file, all rows or none (staff; 409 with problems or when "
        "already stored)",
        request=None,
        responses={200: ScoreImportSerializer, **E},
    )
    def post(self, request: Request, code: str, import_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        services.import_commit(actor=user, course=course, import_id=import_id)
        return Response(
            _import_data(
                course, services.import_get(actor=user, course=course, import_id=import_id)
            )
        )


class GradeCellSerializer(serializers.Serializer):
    component = serializers.CharField()
    percent = serializers.FloatField(allow_null=True)
    origin = serializers.CharField(
        help_text="student entry, group entry, a source name, or empty (no score)."
    )
    detail = serializers.CharField()
    to_come = serializers.CharField(
        help_text="Non-empty when the score is so far and more will count (the what-if then "
        "treats it as unknown), e.g. '4 of 5 assignments not released yet'."
    )
    percent_text = serializers.CharField(help_text="The percent as the pages write it; — none.")
    below_threshold = serializers.BooleanField(
        help_text="Below the component's satisfactory threshold (the board marks it ▼)."
    )


class GradeRowSerializer(serializers.Serializer):
    student = serializers.EmailField()
    name = serializers.CharField()
    sid = serializers.CharField()
    group = serializers.CharField()
    status = serializers.CharField(
        help_text="final (a letter), fail (F: a component unsatisfactory) or incomplete."
    )
    letter = serializers.CharField(allow_null=True)
    total = serializers.FloatField(allow_null=True)
    to_date = serializers.FloatField(
        allow_null=True, help_text="Weighted mean over the components scored so far."
    )
    at_risk = serializers.BooleanField(help_text="Failing a component now.")
    reason = serializers.CharField()
    missing = serializers.ListField(child=serializers.CharField())
    frozen = serializers.BooleanField()
    components = GradeCellSerializer(many=True)


def _row(r: selectors.Row, thresholds: dict[str, float]) -> dict[str, Any]:
    """One student's grade; `thresholds` (component key → satisfactory percent) marks the
    cells below theirs, as the staff board does."""

    def below(k: str, pct: float | None) -> bool:
        return pct is not None and pct + rules.EPS < thresholds.get(k, 0.0)

    return {
        "student": r.student.email,
        "name": r.student.full_name,
        "sid": r.student.sid or "",
        "group": r.group,
        "status": r.status,
        "letter": r.letter,
        "total": r.total,
        "to_date": r.grade.to_date,
        "at_risk": r.at_risk,
        "reason": r.reason,
        "missing": r.grade.missing,
        "frozen": r.frozen,
        "components": [
            {
                "component": k,
                "percent": c.percent,
                "origin": c.origin,
                "detail": c.detail,
                "to_come": c.to_come,
                "percent_text": rules.fmt(c.percent),
                "below_threshold": below(k, c.percent),
            }
            for k, c in r.cells.items()
        ],
    }


FILTERS = [
    OpenApiParameter("q", str, required=False, description="Name, e-mail, SID or group contains."),
    OpenApiParameter("status", str, required=False, enum=list(selectors.STATUS_FILTERS)),
    OpenApiParameter("letter", str, required=False),
    OpenApiParameter(
        "sort",
        str,
        required=False,
        enum=list(selectors.SORTS),
        description="Default: at risk first.",
    ),
]


def _rows(request: Request, course: Any) -> list[selectors.Row]:
    p = request.query_params
    status, sort = p.get("status", ""), p.get("sort", "")
    if status and status not in selectors.STATUS_FILTERS:
        raise DomainError(
            f"status is one of {', '.join(selectors.STATUS_FILTERS)}.", field="status"
        )
    if sort and sort not in selectors.SORTS:
        raise DomainError(f"sort is one of {', '.join(selectors.SORTS)}.", field="sort")
    return selectors.filter_rows(
        selectors.gradebook_rows(course),
        q=p.get("q", "")[:100],
        status=status,
        letter=p.get("letter", "")[:3],
        sort=sort,
    )


class StudentsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every student's components and course grade (staff; at risk first)",
        parameters=[*FILTERS, *PAGE_PARAMETERS],
        responses={200: paginated(GradeRowSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        thresholds = _thresholds(selectors.components_of(course))
        return page_response(
            request, _rows(request, course), lambda page: [_row(r, thresholds) for r in page]
        )


def _thresholds(components: list[Any]) -> dict[str, float]:
    return {c.key: float(c.satisfactory_threshold) for c in components}


class GradeLineSerializer(serializers.Serializer):
    component = serializers.CharField()
    name = serializers.CharField()
    part = serializers.BooleanField(help_text="A part of a composed component.")
    weight = serializers.FloatField(help_text="Percent of the course grade.")
    satisfactory_threshold = serializers.FloatField()
    percent = serializers.FloatField(allow_null=True)
    percent_text = serializers.CharField(help_text="The percent as the page writes it.")
    source_text = serializers.CharField(help_text="How its score is made, in the page's words.")
    detail = serializers.CharField()
    to_come = serializers.CharField()
    failing = serializers.BooleanField(help_text="Below its satisfactory threshold.")


def _lines(components: list[Any], r: selectors.Row) -> list[dict[str, Any]]:
    """The student page's lines: every component and part, composed ones included."""
    return [
        {
            "component": x["c"].key,
            "name": x["c"].name,
            "part": x["is_part"],
            "weight": float(x["c"].weight),
            "satisfactory_threshold": float(x["c"].satisfactory_threshold),
            "percent": x["percent"],
            "percent_text": x["shown"],
            "source_text": x["source"],
            "detail": x["cell"].detail if x["cell"] else "",
            "to_come": x["cell"].to_come if x["cell"] else "",
            "failing": x["failing"],
        }
        for x in selectors.grade_lines(components, r)
    ]


class GradeWhatIfSerializer(serializers.Serializer):
    target = serializers.CharField()
    needed = serializers.FloatField(
        allow_null=True, help_text="The same percent on every remaining component."
    )
    message = serializers.CharField()


class MyGradeSerializer(GradeRowSerializer):
    what_if = GradeWhatIfSerializer(allow_null=True)
    lines = GradeLineSerializer(
        many=True, help_text="Every component and part as your grade page shows it."
    )


class MeView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your own components, course grade and why; with `target`, what you need",
        parameters=[
            OpenApiParameter("target", str, required=False, description="A letter, e.g. A-.")
        ],
        responses={200: MyGradeSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        components = selectors.components_of(course)
        rows = selectors.gradebook_rows(course, student_ids=[user.pk], components=components)
        if not rows:
            raise DomainError("You have no grades in this course.")
        r = rows[0]
        data = _row(r, _thresholds(components)) | {
            "what_if": None,
            "lines": _lines(components, r),
        }
        target = request.query_params.get("target", "")[:3]
        if target:
            w = selectors.what_if(components, r, target, selectors.cutoffs_of(course))
            data["what_if"] = {"target": w.target, "needed": w.needed, "message": w.message}
        return Response(data)


class ExportView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="CSV of the (filtered) gradebook: Canvas's import shape or plain (staff)",
        parameters=[
            OpenApiParameter("shape", str, enum=["canvas", "plain"], required=False),
            *FILTERS,
        ],
        responses={200: OpenApiResponse(description="text/csv"), **E},
    )
    def get(self, request: Request, code: str) -> HttpResponseBase:
        _, course = api_course(request, code, staff=True)
        shape = request.query_params.get("shape", "plain")
        if shape not in ("canvas", "plain"):
            raise DomainError("shape is canvas or plain.", field="shape")
        return csv_response(
            f"{course.code}-grades-{shape}.csv",
            selectors.export_rows(course, _rows(request, course), shape),
        )


class GradeFreezeSerializer(serializers.Serializer):
    frozen = serializers.BooleanField(
        help_text="true freezes every grade as it is now; false unfreezes."
    )
    confirm = serializers.BooleanField(default=False, help_text="Must be true.")


class FreezeView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Freeze or unfreeze the term's grades (instructors; confirm: true)",
        request=GradeFreezeSerializer,
        responses={200: GradebookComponentsSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _instructor(request, code)
        s = GradeFreezeSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        if s.validated_data["frozen"]:
            services.grades_freeze(actor=user, course=course, confirm=s.validated_data["confirm"])
        else:
            services.grades_unfreeze(actor=user, course=course, confirm=s.validated_data["confirm"])
        return Response(_components_data(course))
