"""Roster API (staff only): list with filters, upload for preview, commit."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.helpers import api_course, error_responses
from apps.core.errors import DomainError
from apps.core.models import Course, Membership, Role, User
from apps.roster.models import RosterImport
from apps.roster.rules import MAX_BYTES
from apps.roster.services import (
    Preview,
    roster_commit,
    roster_import_get,
    roster_preview,
    roster_upload,
)

E = error_responses(e403="Staff only.", e409="The file has problems, or was already committed.")


def _staff_course(request: Request, code: str) -> tuple[User, Course]:
    return api_course(request, code, staff=True)


class RosterMemberSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="user.id")
    name = serializers.CharField(source="user.full_name")
    email = serializers.EmailField(source="user.email")
    sid = serializers.CharField(source="user.sid")

    class Meta:
        model = Membership
        fields = ("id", "name", "email", "sid", "role", "is_active")


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="CSV: name,email,sid,role or a Canvas/bCourses roster export."
    )


class PreviewSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Import id; commit it with /commit/.")
    committed = serializers.BooleanField()
    summary = serializers.DictField(child=serializers.IntegerField())
    notes = serializers.ListField(child=serializers.CharField())
    problems = serializers.ListField(
        child=serializers.DictField(), help_text="{row, column, message}"
    )
    added = serializers.ListField(child=serializers.DictField())
    updated = serializers.ListField(child=serializers.DictField())
    dropped = serializers.ListField(child=serializers.DictField())


def _preview_body(record: RosterImport, plan: Preview) -> dict[str, Any]:
    def changes(items: list[Any]) -> list[dict[str, Any]]:
        return [
            {"row": c.row, "email": c.email, "name": c.name, "role": c.role, "change": c.what}
            for c in items
        ]

    return {
        "id": record.pk,
        "committed": record.committed_at is not None,
        "summary": plan.summary(),
        "notes": plan.parsed.notes,
        "problems": [
            {"row": p.row, "column": p.column, "message": p.message} for p in plan.problems
        ],
        "added": changes(plan.added),
        "updated": changes(plan.updated),
        "dropped": changes(plan.dropped),
    }


class RosterListView(ListAPIView):
    serializer_class = RosterMemberSerializer

    def get_queryset(self) -> QuerySet[Membership]:
        if getattr(self, "swagger_fake_view", False):
            return Membership.objects.none()
        _, course = _staff_course(self.request, self.kwargs["code"])
        qs = (
            Membership.objects.filter(course=course)
            .select_related("user")
            .order_by("role", "user__full_name", "pk")
        )
        p = self.request.query_params
        if p.get("role") in Role.values:
            qs = qs.filter(role=p["role"])
        if p.get("status") == "active":
            qs = qs.filter(is_active=True)
        elif p.get("status") == "dropped":
            qs = qs.filter(is_active=False)
        if p.get("q"):
            q = p["q"]
            qs = qs.filter(
                Q(user__full_name__icontains=q)
                | Q(user__email__icontains=q)
                | Q(user__sid__icontains=q)
            )
        return qs

    @extend_schema(
        tags=["roster"],
        summary="The course roster (staff)",
        parameters=[
            OpenApiParameter("role", enum=Role.values),
            OpenApiParameter("status", enum=["active", "dropped"]),
            OpenApiParameter("q", description="Search name, email or SID"),
        ],
        responses={200: RosterMemberSerializer(many=True), **E},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class RosterUploadView(APIView):
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(
        tags=["roster"],
        summary="Upload a class list for preview (staff)",
        description="Nothing changes until you commit the returned import.",
        request={"multipart/form-data": UploadSerializer},
        responses={201: PreviewSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _staff_course(request, code)
        upload = request.FILES.get("file")
        if upload is None:
            raise DomainError("Attach the CSV as the form field 'file'.", field="file")
        if upload.size and upload.size > MAX_BYTES:
            raise DomainError(
                f"The file is larger than {MAX_BYTES // 1024 // 1024} MB.", field="file"
            )
        record, plan = roster_upload(
            actor=user, course=course, filename=upload.name or "roster.csv", data=upload.read()
        )
        return Response(_preview_body(record, plan), status=201)


class RosterPreviewView(APIView):
    @extend_schema(
        tags=["roster"],
        summary="An import's preview, as it would apply now (staff)",
        responses={200: PreviewSerializer, **E},
    )
    def get(self, request: Request, code: str, import_id: int) -> Response:
        user, course = _staff_course(request, code)
        record = roster_import_get(actor=user, course=course, import_id=import_id)
        return Response(
            _preview_body(record, roster_preview(course=course, data=bytes(record.content)))
        )


class RosterCommitView(APIView):
    @extend_schema(
        tags=["roster"],
        summary="Commit an import, all or nothing (staff)",
        request=None,
        responses={200: PreviewSerializer, **E},
    )
    def post(self, request: Request, code: str, import_id: int) -> Response:
        user, course = _staff_course(request, code)
        record = roster_import_get(actor=user, course=course, import_id=import_id)
        plan = roster_commit(actor=user, record=record)
        record.refresh_from_db()
        return Response(_preview_body(record, plan))
