"""Milestones API: a group's status per milestone (students: their own group; staff: every
group, paged), recording a link, and staff extensions, excuses and milestone edits."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.calendar.api.deadline_views import DeadlineImpactBase, edit_payload
from apps.calendar.api.serializers import MilestoneSerializer
from apps.calendar.api.serializers_events import DeadlineEditSerializer, ImpactSerializer
from apps.calendar.models import Milestone
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    paginated,
)
from apps.core.api.pagination import StandardPagination
from apps.core.integrity import DeclarationSerializerMixin
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant
from apps.groups.models import Group
from apps.milestones import services
from apps.milestones.models import GroupMilestone
from apps.milestones.selectors import (
    Cell,
    board_groups,
    cells_for_groups,
    group_of,
    tracked_milestones,
)

E = error_responses()
TAGS = ["milestones"]


class CellSerializer(serializers.Serializer):
    milestone = serializers.IntegerField(help_text="Milestone id.")
    key = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=["not_submitted", "submitted", "late", "excused"])
    overdue = serializers.BooleanField(help_text="Not submitted and past the group's deadline.")
    due_at = serializers.DateTimeField(help_text="The group's deadline (extension applied).")
    extension_hours = serializers.IntegerField()
    link = serializers.CharField(allow_blank=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    submitted_by = serializers.CharField(allow_blank=True)
    ai_used = serializers.BooleanField(
        allow_null=True, help_text="External code or AI assistants used (null: not declared)."
    )
    ai_description = serializers.CharField(allow_blank=True)
    sources_required = serializers.BooleanField(
        help_text="The milestone asks for a sources and AI-use statement."
    )
    sources = serializers.CharField(
        allow_blank=True, help_text="The group's statement: what was used, and where."
    )
    notes = serializers.CharField(
        allow_null=True, help_text="The milestone's description (students; staff: null)."
    )
    status_label = serializers.CharField(
        help_text="The status in the page's words ('overdue' first)."
    )
    due_text = serializers.CharField(help_text="`due_at` in course time, as the page writes it.")
    submitted_text = serializers.CharField(
        allow_null=True,
        help_text="`submitted_at` in course time, as the page writes it (students; staff: null).",
    )
    submitted_by_name = serializers.CharField(
        allow_null=True, help_text="Who recorded it, as the page names them (staff: null)."
    )


class GroupRowSerializer(serializers.Serializer):
    group = serializers.IntegerField()
    group_name = serializers.CharField()
    timezone = serializers.CharField(help_text="The course's zone, which every `*_text` uses.")
    milestones = CellSerializer(many=True)


def _cell(c: Cell, zone: str, *, staff: bool) -> dict[str, Any]:
    """One milestone of a group. The student page's own facts (description, who recorded it
    and when, in words) are null for staff, whose board shows only the status: 40 groups'
    worth stays one small page."""
    r = c.record
    by = r.submitted_by if r else None
    mine = not staff
    return {
        "milestone": c.milestone.pk,
        "key": c.milestone.key,
        "name": c.milestone.name,
        "status": c.status.value,
        "overdue": c.overdue,
        "due_at": c.due,
        "extension_hours": r.extension_hours if r else 0,
        "link": r.link if r else "",
        "submitted_at": r.submitted_at if r else None,
        "submitted_by": (r.submitted_by.email if r and r.submitted_by else ""),
        "ai_used": r.ai_used if r else None,
        "ai_description": r.ai_description if r else "",
        "sources_required": c.milestone.sources_required,
        "sources": r.sources if r else "",
        "notes": c.milestone.notes if mine else None,
        "status_label": c.label,
        "due_text": format_instant(c.due, zone),
        "submitted_text": (
            format_instant(r.submitted_at, zone) if mine and r and r.submitted_at else None
        ),
        "submitted_by_name": ((by.get_full_name() or by.email) if by else "") if mine else None,
    }


class MilestoneBoardView(APIView):
    @extend_schema(
        tags=TAGS,
        summary=(
            "Each group's milestones (staff: every group, late ones first, 20 groups a page by "
            "default; students: their own)"
        ),
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter("q", str, description="Staff: group name contains."),
            OpenApiParameter(
                "status",
                str,
                enum=["overdue", "late", "submitted", "excused"],
                description="Staff: groups with at least one milestone in this status.",
            ),
        ],
        responses={200: paginated(GroupRowSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        milestones = tracked_milestones(course=course)
        staff = is_staff(user, course)
        if staff:
            groups: Any = board_groups(
                course=course,
                q=request.query_params.get("q", "").strip(),
                status=request.query_params.get("status", ""),
            )
        else:
            own = group_of(course=course, user=user)
            groups = [own] if own else []

        def render(page: list[Group]) -> list[dict[str, Any]]:
            cells = cells_for_groups(course=course, groups=page, milestones=milestones)
            return [
                {
                    "group": g.pk,
                    "group_name": g.name,
                    "timezone": course.timezone,
                    "milestones": [_cell(c, course.timezone, staff=staff) for c in cells[g.pk]],
                }
                for g in page
            ]

        paginator = _GroupPages()
        page = paginator.paginate_queryset(groups, request)
        return paginator.get_paginated_response(render(list(page or [])))


class _GroupPages(StandardPagination):
    """20 groups a page by default: each row carries every milestone, and 50 groups of them
    passed 100 KB."""

    page_size = 20


class SubmitSerializer(DeclarationSerializerMixin):
    link = serializers.URLField(
        max_length=500, help_text="Full https:// address of the submission."
    )
    sources = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=services.MAX_SOURCES,
        help_text="Sources and AI-use statement: what was used, and where. Required where the "
        "milestone asks for it.",
    )


class RecordSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()

    class Meta:
        model = GroupMilestone
        fields = (
            "id",
            "milestone",
            "group",
            "link",
            "submitted_at",
            "extension_hours",
            "excused",
            "status",
            "ai_used",
            "ai_description",
            "sources",
        )

    def get_status(self, obj: GroupMilestone) -> str:
        from apps.milestones import rules

        return rules.milestone_status(
            due=obj.milestone.due_at,
            extension_hours=obj.extension_hours,
            submitted_at=obj.submitted_at,
            excused=obj.excused,
        ).value


class SubmitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Record your group's link for a milestone (late after the group's deadline)",
        request=SubmitSerializer,
        responses={200: RecordSerializer, **E},
    )
    def post(self, request: Request, code: str, milestone_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        data = SubmitSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        rec = services.milestone_submit(
            actor=user,
            course=course,
            milestone_id=milestone_id,
            link=v["link"],
            ai_used=v["ai_used"],
            ai_description=v.get("ai_description", ""),
            sources=v.get("sources", ""),
        )
        return Response(RecordSerializer(rec).data)


class ExtensionSerializer(serializers.Serializer):
    group = serializers.IntegerField(help_text="Group id.")
    hours = serializers.IntegerField(
        min_value=0,
        max_value=services.MAX_EXTENSION_HOURS,
        help_text="Hours after the due time; 0 removes the extension.",
    )
    reason = serializers.CharField(max_length=300)


class ExtensionView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Give a group extra hours on a milestone (staff; audited)",
        request=ExtensionSerializer,
        responses={200: RecordSerializer, **E},
    )
    def post(self, request: Request, code: str, milestone_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = ExtensionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        rec = services.milestone_extend(
            actor=user,
            course=course,
            milestone_id=milestone_id,
            group_id=v["group"],
            hours=v["hours"],
            reason=v["reason"],
        )
        return Response(RecordSerializer(rec).data)


class ExcuseSerializer(serializers.Serializer):
    group = serializers.IntegerField(help_text="Group id.")
    excused = serializers.BooleanField()
    reason = serializers.CharField(max_length=300, allow_blank=True, required=False, default="")


class ExcuseView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Excuse a group from a milestone, or take it back (staff; audited)",
        request=ExcuseSerializer,
        responses={200: RecordSerializer, **E},
    )
    def post(self, request: Request, code: str, milestone_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = ExcuseSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        rec = services.milestone_excuse(
            actor=user,
            course=course,
            milestone_id=milestone_id,
            group_id=v["group"],
            excused=v["excused"],
            reason=v["reason"],
        )
        return Response(RecordSerializer(rec).data)


class MilestoneEditSerializer(DeadlineEditSerializer):
    name = serializers.CharField(required=False, max_length=200)


class MilestoneEditView(APIView):
    @extend_schema(
        tags=["calendar"],
        summary="Rename or move a milestone (staff); moving needs confirm: true",
        request=MilestoneEditSerializer,
        responses={200: MilestoneSerializer, **E},
    )
    def patch(self, request: Request, code: str, milestone_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        v = edit_payload(request, MilestoneEditSerializer)
        m, _ = services.milestone_update(
            actor=user,
            course=course,
            milestone_id=milestone_id,
            name=v.get("name"),
            due_at=v.get("due_at"),
            confirm=v["confirm"],
        )
        return Response(MilestoneSerializer(m).data)


class MilestoneImpactView(DeadlineImpactBase):
    load = staticmethod(lambda course, pk: Milestone.objects.filter(course=course, pk=pk).first())
    impact_of = staticmethod(
        lambda course, m, due: services.milestone_move_impact(
            course=course, milestone=m, new_due=due
        )
    )

    @extend_schema(
        tags=["calendar"],
        summary="Who moving a milestone would affect (staff; changes nothing)",
        parameters=[
            OpenApiParameter(
                "due_at", str, required=True, description="The new deadline (ISO 8601 with offset)."
            )
        ],
        responses={200: ImpactSerializer, **E},
    )
    def get(self, request: Request, code: str, milestone_id: int) -> Response:  # type: ignore[override]
        return super().get(request, code, milestone_id=milestone_id)
