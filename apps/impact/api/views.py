"""Impact API: a group's evidence (students add and remove until the impact update closes),
staff scores of items and groups."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
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
from apps.core.integrity import DeclarationSerializerMixin
from apps.groups.models import Group
from apps.impact import selectors, services
from apps.impact.models import KINDS, GroupImpact, ImpactItem

E = error_responses(e409="The impact update has closed, or you are in no group.")
TAGS = ["impact"]


class ImpactItemSerializer(serializers.ModelSerializer):
    group = serializers.CharField(source="group.name", read_only=True)
    kind_label = serializers.CharField(
        source="get_kind_display", read_only=True, help_text="The kind in the page's words."
    )
    added_by_name = serializers.SerializerMethodField(help_text="Who recorded it, by name.")
    happened_on_text = serializers.SerializerMethodField(
        help_text="`happened_on` as the page writes it."
    )

    class Meta:
        model = ImpactItem
        fields = (
            "id",
            "group",
            "kind",
            "url",
            "happened_on",
            "claim",
            "created_at",
            "score",
            "staff_note",
            "ai_used",
            "ai_description",
            "kind_label",
            "added_by_name",
            "happened_on_text",
        )
        read_only_fields = ("id", "group", "created_at", "score", "staff_note")

    def get_added_by_name(self, i: ImpactItem) -> str | None:
        return i.added_by.get_full_name() if i.added_by else None

    def get_happened_on_text(self, i: ImpactItem) -> str:
        from django.utils.formats import date_format

        return str(date_format(i.happened_on))


class ImpactItemInSerializer(DeclarationSerializerMixin):
    kind = serializers.ChoiceField(choices=KINDS)
    url = serializers.CharField(
        max_length=500, help_text="https://…; checked for form, never fetched."
    )
    happened_on = CourseDateField()
    claim = serializers.CharField(max_length=300)


class ItemsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Evidence items (students: their group's; staff: all)",
        parameters=[
            OpenApiParameter("group", int, required=False, description="Staff."),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(ImpactItemSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = selectors.item_list(user=user, course=course).order_by(
            "group__name", "happened_on", "pk"
        )
        group = request.query_params.get("group", "")
        if group.isdigit():
            qs = qs.filter(group_id=int(group))
        return page_response(request, qs, lambda page: ImpactItemSerializer(page, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Record an evidence item for your group (students)",
        request=ImpactItemInSerializer,
        responses={201: ImpactItemSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        s = ImpactItemInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        item = services.item_add(actor=user, course=course, **s.validated_data)
        return Response(ImpactItemSerializer(item).data, status=201)


class ItemView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Remove your group's item before the close (staff: any)",
        request=None,
        responses={204: None, **E},
    )
    def delete(self, request: Request, code: str, item_id: int) -> Response:
        user, course = api_course(request, code)
        services.item_remove(actor=user, course=course, item_id=item_id)
        return Response(status=204)


class ItemScoreSerializer(serializers.Serializer):
    score = serializers.IntegerField(min_value=0, max_value=100, allow_null=True)
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class ItemScoreView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Score one item (staff)",
        request=ItemScoreSerializer,
        responses={200: ImpactItemSerializer, **E},
    )
    def post(self, request: Request, code: str, item_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ItemScoreSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        item = services.item_score(actor=user, course=course, item_id=item_id, **s.validated_data)
        return Response(ImpactItemSerializer(item).data)


class GroupImpactSerializer(serializers.Serializer):
    group = serializers.IntegerField()
    name = serializers.CharField()
    items = serializers.IntegerField()
    percent = serializers.FloatField(allow_null=True)
    note = serializers.CharField()


class GroupsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every group's item count and impact score (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(GroupImpactSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        from django.db.models import Count

        groups = (
            Group.objects.filter(course=course, dissolved_at__isnull=True)
            .annotate(n=Count("impact_items"))
            .order_by("name")
        )

        def render(page: list[Any]) -> list[dict[str, Any]]:
            scores = {s.group_id: s for s in GroupImpact.objects.filter(group__in=page)}
            return [
                {
                    "group": g.pk,
                    "name": g.name,
                    "items": g.n,
                    "percent": float(scores[g.pk].percent) if g.pk in scores else None,
                    "note": scores[g.pk].note if g.pk in scores else "",
                }
                for g in page
            ]

        return page_response(request, groups, render)


class GroupScoreInSerializer(serializers.Serializer):
    percent = serializers.FloatField(
        min_value=0, max_value=100, allow_null=True, help_text="null clears."
    )
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class GroupScoreView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Set or clear a group's impact score, read by the gradebook (staff)",
        request=GroupScoreInSerializer,
        responses={200: GroupImpactSerializer, **E},
    )
    def post(self, request: Request, code: str, group_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        s = GroupScoreInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        row = services.group_score(actor=user, course=course, group_id=group_id, **s.validated_data)
        group = Group.objects.get(pk=group_id)
        return Response(
            {
                "group": group.pk,
                "name": group.name,
                "items": group.impact_items.count(),
                "percent": float(row.percent) if row else None,
                "note": row.note if row else "",
            }
        )
