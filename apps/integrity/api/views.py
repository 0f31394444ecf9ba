"""Similarity API (staff only): the checks, one check's ranked group pairs (paged, filtered
like the page) and one pair with its matching files and character ranges."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound as DRFNotFound
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
from apps.core.api.pagination import StandardPagination
from apps.core.errors import NotFound
from apps.core.timefmt import format_instant
from apps.integrity import selectors
from apps.integrity.models import SimilarityCheck, SimilarityPair

E = error_responses()
TAGS = ["integrity"]


class CheckSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=SimilarityCheck.Status.choices)
    status_label = serializers.CharField()
    progress = serializers.IntegerField(help_text="Percent of group pairs compared.")
    note = serializers.CharField(allow_blank=True, help_text="Why it failed.")
    threshold = serializers.FloatField(help_text="Share (0–1) at which a pair is flagged.")
    groups = serializers.IntegerField(allow_null=True)
    pairs = serializers.IntegerField(allow_null=True)
    flagged = serializers.IntegerField(allow_null=True)
    milestone = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    created_text = serializers.CharField(help_text="In course time, the zone named.")
    warnings = serializers.ListField(child=serializers.CharField())


class PairSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rank = serializers.IntegerField()
    group_a = serializers.CharField()
    group_b = serializers.CharField()
    percent = serializers.FloatField(help_text="The best file pair's larger share, 0–1.")
    percent_a = serializers.FloatField()
    percent_b = serializers.FloatField()
    file_a = serializers.CharField()
    file_b = serializers.CharField()
    flagged = serializers.BooleanField()


class FileMatchSerializer(serializers.Serializer):
    file_a = serializers.CharField()
    file_b = serializers.CharField()
    percent_a = serializers.FloatField()
    percent_b = serializers.FloatField()
    slices_a = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
    slices_b = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
    text_a = serializers.CharField()
    text_b = serializers.CharField()


class DeclaredSerializer(serializers.Serializer):
    ai_used = serializers.BooleanField(allow_null=True)
    ai_description = serializers.CharField(allow_blank=True)
    sources = serializers.CharField(allow_blank=True)


class PairDetailSerializer(PairSerializer):
    files = FileMatchSerializer(many=True)
    declared_a = DeclaredSerializer(allow_null=True)
    declared_b = DeclaredSerializer(allow_null=True)


def check_data(c: SimilarityCheck) -> dict[str, Any]:
    return {
        "id": c.pk,
        "title": c.title,
        "status": c.status,
        "status_label": c.get_status_display(),
        "progress": c.progress,
        "note": c.note,
        "threshold": c.threshold,
        "groups": c.stats.get("groups"),
        "pairs": c.stats.get("pairs"),
        "flagged": c.stats.get("flagged"),
        "milestone": c.milestone_id,
        "created_at": c.created_at,
        "created_text": format_instant(c.created_at, c.course.timezone),
        "warnings": c.warnings,
    }


def pair_data(p: SimilarityPair, rank: int, threshold: float) -> dict[str, Any]:
    return {
        "id": p.pk,
        "rank": rank,
        "group_a": p.group_a.name,
        "group_b": p.group_b.name,
        "percent": p.percent,
        "percent_a": p.percent_a,
        "percent_b": p.percent_b,
        "file_a": p.file_a.path,
        "file_b": p.file_b.path,
        "flagged": p.percent >= threshold,
    }


def _declared(r: Any) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"ai_used": r.ai_used, "ai_description": r.ai_description, "sources": r.sources}


def _get_check(request: Request, code: str, check_id: int) -> SimilarityCheck:
    user, course = api_course(request, code, staff=True)
    try:
        return selectors.check_get(user=user, course=course, check_id=check_id)
    except NotFound as exc:
        raise DRFNotFound(exc.message) from exc


class CheckListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Similarity checks (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(CheckSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        rows = selectors.check_list(user=user, course=course).select_related("course")
        return page_response(request, rows, lambda page: [check_data(c) for c in page])


class PairListView(APIView):
    @extend_schema(
        tags=TAGS,
        operation_id="courses_similarity_pairs_list",
        summary="A similarity check's group pairs, highest share first (staff)",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter("q", str, description="Part of either group's name.", required=False),
            OpenApiParameter("flagged", int, description="1: flagged pairs only.", required=False),
        ],
        responses={200: paginated(PairSerializer), **E},
    )
    def get(self, request: Request, code: str, check_id: int) -> Response:
        check = _get_check(request, code, check_id)
        rows = selectors.pair_list(
            check=check,
            q=request.query_params.get("q", "").strip()[:100],
            flagged_only=request.query_params.get("flagged") == "1",
        )
        # One page in SQL; a pair's rank is its place in the whole ordering: the page's offset
        # plus its place on the page (not every pair of the check loaded to number them).
        paginator = StandardPagination()
        page = list(paginator.paginate_queryset(rows, request) or [])
        number = paginator.page.number if paginator.page is not None else 1
        offset = (number - 1) * paginator.get_page_size(request)
        return paginator.get_paginated_response(
            [pair_data(p, offset + i, check.threshold) for i, p in enumerate(page, 1)]
        )


class PairDetailView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="One group pair: matching files, character ranges, declared sources (staff)",
        responses={200: PairDetailSerializer, **E},
    )
    def get(self, request: Request, code: str, check_id: int, match_id: int) -> Response:
        check = _get_check(request, code, check_id)
        try:
            pair = selectors.pair_get(check=check, pair_id=match_id)
        except NotFound as exc:
            raise DRFNotFound(exc.message) from exc
        rank = selectors.pair_list(check=check).filter(percent__gt=pair.percent).count() + 1
        declared = selectors.declarations(check, [pair.group_a_id, pair.group_b_id])
        files = [
            {
                "file_a": f["a"].path,
                "file_b": f["b"].path,
                "percent_a": f["percent_a"],
                "percent_b": f["percent_b"],
                "slices_a": f["slices_a"],
                "slices_b": f["slices_b"],
                "text_a": f["a"].text,
                "text_b": f["b"].text,
            }
            for f in selectors.pair_files(pair)[:10]
        ]
        return Response(
            {
                **pair_data(pair, rank, check.threshold),
                "files": files,
                "declared_a": _declared(declared.get(pair.group_a_id)),
                "declared_b": _declared(declared.get(pair.group_b_id)),
            }
        )
