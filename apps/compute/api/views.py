"""Compute API. Students see their own group's node, IP, windows and incidents; staff see and
manage everything. Every write goes through the same services as the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.compute.api.serializers import (
    AllocateSerializer,
    AllocationSerializer,
    CourseWideIncidentSerializer,
    FilesSerializer,
    IncidentReportSerializer,
    IncidentSerializer,
    IncidentStatusSerializer,
    NodeSerializer,
    NoteSerializer,
    RunRecordCreateSerializer,
    RunRecordSerializer,
    StaticIPSerializer,
    WindowRequestSerializer,
    WindowSerializer,
)
from apps.compute.board import access, incidents, runs, services, windows
from apps.compute.board.runs import window_needs_record
from apps.compute.board.selectors import (
    allocation_list,
    group_id_of,
    incident_list,
    node_list,
    own_node_bundle,
    window_bundle,
    window_list,
)
from apps.compute.models import Allocation, Node, SharingWindow, StaticIP
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import Conflict, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff

E = error_responses(e409="Conflicts with the current state (taken, overlapping, already decided).")
TAGS = ["compute"]


_ctx = api_course


def _files(bundle: access.Bundle) -> dict[str, Any]:
    return {
        "hosts": access.hosts_block(bundle),
        "ssh_config": access.ssh_config(bundle),
        "launch": access.launch_script(bundle),
        "launch_env": access.launch_env(bundle),
        "firewall": access.firewall_command(bundle),
    }


class NodeListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Nodes (staff: all; students: their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(NodeSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        return page_response(
            request,
            node_list(user=user, course=course),
            lambda p: NodeSerializer(p, many=True).data,
        )

    @extend_schema(
        tags=TAGS,
        summary="Add a node (staff)",
        request=NodeSerializer,
        responses={201: NodeSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = NodeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        node = services.node_save(actor=user, course=course, data=data.validated_data)
        return Response(NodeSerializer(node).data, status=201)


class NodeDetailView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Edit a node, e.g. its status (staff)",
        request=NodeSerializer,
        responses={200: NodeSerializer, **E},
    )
    def patch(self, request: Request, code: str, node_id: int) -> Response:
        user, course = _ctx(request, code, staff=True)
        node = Node.objects.filter(course=course, pk=node_id).first()
        if node is None:
            raise NotFound("No such node in this course.")
        data = NodeSerializer(node, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        node = services.node_save(
            actor=user, course=course, data=data.validated_data, node_id=node_id
        )
        return Response(NodeSerializer(node).data)


class StaticIPListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Static IPs (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(StaticIPSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = _ctx(request, code, staff=True)
        ips = StaticIP.objects.filter(course=course).order_by("address")
        return page_response(request, ips, lambda p: StaticIPSerializer(p, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Add a static IP (staff)",
        request=StaticIPSerializer,
        responses={201: StaticIPSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = StaticIPSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ip = services.static_ip_create(actor=user, course=course, data=data.validated_data)
        return Response(StaticIPSerializer(ip).data, status=201)


class AllocationListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Current allocations (staff: all; students: their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(AllocationSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        return page_response(
            request,
            allocation_list(user=user, course=course),
            lambda p: AllocationSerializer(p, many=True).data,
        )

    @extend_schema(
        tags=TAGS,
        summary="Allocate a node and IP to a group (staff)",
        request=AllocateSerializer,
        responses={201: AllocationSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = AllocateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        a = services.allocation_create(
            actor=user,
            course=course,
            group_id=data.validated_data["group"],
            node_id=data.validated_data.get("node"),
            ip_id=data.validated_data.get("static_ip"),
            override_reason=data.validated_data["override_reason"],
        )
        return Response(AllocationSerializer(a).data, status=201)


class AllocateAllView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Allocate every unallocated group, all or nothing (staff)",
        description="409 names the groups left without when there are too few free nodes or IPs. "
        "Groups under the minimum size are left out: merge them, or allocate each with an "
        "override_reason.",
        request=None,
        responses={200: AllocationSerializer(many=True), **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        return Response(
            AllocationSerializer(services.allocate_all(actor=user, course=course), many=True).data
        )


class ReleaseView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Release an allocation (staff)",
        request=None,
        responses={200: AllocationSerializer, **E},
    )
    def post(self, request: Request, code: str, allocation_id: int) -> Response:
        user, course = _ctx(request, code)
        return Response(
            AllocationSerializer(
                services.allocation_release(actor=user, course=course, allocation_id=allocation_id)
            ).data
        )


class MyNodeFilesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Access files for your group's own node",
        responses={200: FilesSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        a = (
            Allocation.objects.filter(
                course=course,
                group_id=group_id_of(user=user, course=course) or 0,
                ended_at__isnull=True,
            )
            .select_related("node", "static_ip", "group", "course")
            .first()
        )
        if a is None:
            raise NotFound("Your group holds no node.")
        return Response(_files(own_node_bundle(allocation=a)))


class WindowListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Sharing windows (staff: all; students: their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(WindowSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        return page_response(
            request,
            window_list(user=user, course=course),
            lambda p: WindowSerializer(p, many=True).data,
        )

    @extend_schema(
        tags=TAGS,
        summary="Request a window (student)",
        request=WindowRequestSerializer,
        responses={201: WindowSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        data = WindowRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        w = windows.window_request(actor=user, course=course, **data.validated_data)
        return Response(
            WindowSerializer(window_list(user=user, course=course).get(pk=w.pk)).data, status=201
        )


def _visible_window(user: User, course: Course, window_id: int) -> SharingWindow:
    w = window_list(user=user, course=course).filter(pk=window_id).first()
    if w is None:
        raise NotFound("No such window, or not one of your group's.")
    return w


class WindowActionView(APIView):
    action_name = ""

    @extend_schema(tags=TAGS, request=NoteSerializer, responses={200: WindowSerializer, **E})
    def post(self, request: Request, code: str, window_id: int) -> Response:
        user, course = _ctx(request, code)
        _visible_window(user, course, window_id)
        note = str((request.data or {}).get("note", "")) if isinstance(request.data, dict) else ""
        if self.action_name == "approve":
            confirm = isinstance(request.data, dict) and bool(request.data.get("confirm"))
            windows.window_approve(actor=user, course=course, window_id=window_id, confirm=confirm)
        elif self.action_name == "decline":
            windows.window_decline(actor=user, course=course, window_id=window_id, note=note)
        else:
            windows.window_cancel(actor=user, course=course, window_id=window_id, note=note)
        return Response(WindowSerializer(_visible_window(user, course, window_id)).data)


class WindowFilesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Access files of an approved window (participants and staff)",
        responses={200: FilesSerializer, **E},
    )
    def get(self, request: Request, code: str, window_id: int) -> Response:
        user, course = _ctx(request, code)
        w = _visible_window(user, course, window_id)
        if w.status != SharingWindow.Status.APPROVED:
            raise NotAllowed("Access files exist once the window is approved.")
        if not is_staff(user, course) and window_needs_record(w):
            raise Conflict(
                f"This course asks for a run record naming window #{w.pk} before it starts: "
                "POST one to runs/ first."
            )
        return Response(_files(window_bundle(window=w)))


class IncidentListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Incidents (staff: all; students: their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(IncidentSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        qs = incident_list(user=user, course=course).order_by("-occurred_at", "-id")
        return page_response(
            request, qs, lambda p: IncidentSerializer(p, many=True, context={"course": course}).data
        )

    @extend_schema(
        tags=TAGS,
        summary="Report an incident",
        request=IncidentReportSerializer,
        responses={201: IncidentSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        data = IncidentReportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        i = incidents.incident_report(
            actor=user,
            course=course,
            node_id=v["node"],
            occurred_at=v["occurred_at"],
            summary=v["summary"],
            job_ids=v.get("job_ids", ""),
            logs=v.get("logs", ""),
            repro=v.get("repro", ""),
        )
        return Response(IncidentSerializer(i, context={"course": course}).data, status=201)


class IncidentStatusView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Acknowledge or resolve an incident (staff)",
        request=IncidentStatusSerializer,
        responses={200: IncidentSerializer, **E},
    )
    def post(self, request: Request, code: str, incident_id: int) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = IncidentStatusSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        i = incidents.incident_update(
            actor=user,
            course=course,
            incident_id=incident_id,
            status=data.validated_data["status"],
            note=data.validated_data.get("note", ""),
            course_wide=data.validated_data.get("course_wide"),
        )
        return Response(IncidentSerializer(i, context={"course": course}).data)


class CourseWideIncidentListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Incidents that affect the whole course (every member)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(CourseWideIncidentSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = _ctx(request, code)
        qs = incidents.course_wide_incidents(course)
        return page_response(request, qs, lambda p: CourseWideIncidentSerializer(p, many=True).data)


class IncidentAffectsUsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Say a course-wide incident affects your group too (students)",
        request=None,
        responses={201: CourseWideIncidentSerializer, **E},
    )
    def post(self, request: Request, code: str, incident_id: int) -> Response:
        user, course = _ctx(request, code)
        if is_staff(user, course):
            raise NotAllowed("Only students say their group is affected.")
        incidents.incident_affects_us(actor=user, course=course, incident_id=incident_id)
        i = incidents.course_wide_incidents(course).get(pk=incident_id)
        return Response(CourseWideIncidentSerializer(i).data, status=201)


class RunRecordListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Run records (staff: every group's, searchable with ?q=; students: their group's)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(RunRecordSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        qs = runs.run_records(user=user, course=course, q=request.query_params.get("q", ""))
        return page_response(request, qs, lambda p: RunRecordSerializer(p, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Record a run for your group",
        request=RunRecordCreateSerializer,
        responses={201: RunRecordSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        data = RunRecordCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        group_id = v.pop("group", None)
        r = runs.run_record_create(actor=user, course=course, data=v, group_id=group_id)
        return Response(RunRecordSerializer(r).data, status=201)
