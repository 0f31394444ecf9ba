"""Groups API. Students: list (own group in full, others name + size), create, join, leave,
rename. Staff: everything, plus assign/move, remove, merge, dissolve, ungrouped list."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
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
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.groups import services
from apps.groups.api.serializers import (
    GroupBriefSerializer,
    GroupFullSerializer,
    GroupSeenSerializer,
    JoinSerializer,
    MergeSerializer,
    NameSerializer,
    UngroupedSerializer,
    UserRefSerializer,
)
from apps.groups.models import Group, GroupMembership
from apps.groups.selectors import (
    current_members_prefetch,
    group_list,
    group_list_with_sizes,
    group_visible_in_full,
    students_without_group,
)

E = error_responses(
    e403="Not allowed (wrong role, or after the formation deadline).",
    e409="Conflicts with the current state (full, taken, already in a group).",
)


_ctx = api_course


def _render(user: User, course: Course, group: Group) -> dict[str, Any]:
    mine = any(m.user_id == user.pk for m in getattr(group, "current_members", []))
    if is_staff(user, course) or mine:
        return {**GroupFullSerializer(group, context={"course": course}).data, "full": True}
    return {**GroupBriefSerializer(group).data, "full": False}


def _one(course: Course, group_id: int) -> Group:
    group = (
        group_list_with_sizes(course=course)
        .prefetch_related(current_members_prefetch())
        .filter(pk=group_id)
        .first()
    )
    if group is None:
        raise NotFound("No such group in this course.")
    return group


class GroupListView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Groups of the course",
        operation_id="courses_groups_list",
        description="Staff see members and join codes; students see every group's name and size "
        "(their own in full at groups/<id>/).",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(GroupSeenSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        if is_staff(user, course):
            groups = group_list(user=user, course=course)
            return page_response(request, groups, lambda p: [_render(user, course, g) for g in p])
        # Students: names and sizes only (their own group in full at groups/<id>/), no members
        # loaded for 400 groups.
        brief = group_list_with_sizes(course=course)
        return page_response(
            request, brief, lambda p: [{**GroupBriefSerializer(g).data, "full": False} for g in p]
        )

    @extend_schema(
        tags=["groups"],
        summary="Create a group",
        description="A student creates a group and becomes its first member (until the formation "
        "deadline); staff create an empty group.",
        request=NameSerializer,
        responses={201: GroupFullSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        data = NameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        create = services.group_staff_create if is_staff(user, course) else services.group_create
        group = create(actor=user, course=course, name=data.validated_data["name"])
        return Response(_render(user, course, _one(course, group.pk)), status=201)


class GroupDetailView(APIView):
    @extend_schema(tags=["groups"], summary="One group", responses={200: GroupSeenSerializer, **E})
    def get(self, request: Request, code: str, group_id: int) -> Response:
        user, course = _ctx(request, code)
        return Response(_render(user, course, _one(course, group_id)))

    @extend_schema(
        tags=["groups"],
        summary="Rename a group",
        request=NameSerializer,
        responses={200: GroupSeenSerializer, **E},
    )
    def patch(self, request: Request, code: str, group_id: int) -> Response:
        user, course = _ctx(request, code)
        group = _one(course, group_id)
        if not group_visible_in_full(user=user, group=group):
            raise NotAllowed("Only the group's members and the course staff rename a group.")
        data = NameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.group_rename(actor=user, group=group, name=data.validated_data["name"])
        return Response(_render(user, course, _one(course, group_id)))

    @extend_schema(
        tags=["groups"],
        summary="Dissolve a group (staff)",
        description="Every member becomes ungrouped; history is kept.",
        responses={204: None, **E},
    )
    def delete(self, request: Request, code: str, group_id: int) -> Response:
        user, course = _ctx(request, code)
        services.group_dissolve(actor=user, course=course, group_id=group_id)
        return Response(status=204)


class JoinView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Join a group with its code",
        request=JoinSerializer,
        responses={200: GroupFullSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        group = services.group_join(actor=user, course=course, code=data.validated_data["code"])
        return Response(_render(user, course, _one(course, group.pk)))


class LeaveView(APIView):
    @extend_schema(
        tags=["groups"], summary="Leave your group", request=None, responses={204: None, **E}
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        services.group_leave(actor=user, course=course)
        return Response(status=204)


class MembersView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Put a student into this group (staff)",
        description="Assigns an ungrouped student or moves one from another group.",
        request=UserRefSerializer,
        responses={200: GroupFullSerializer, **E},
    )
    def post(self, request: Request, code: str, group_id: int) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = UserRefSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.member_move(
            actor=user, course=course, user_id=data.validated_data["user"], group_id=group_id
        )
        return Response(_render(user, course, _one(course, group_id)))


class MemberView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Take a student out of this group (staff)",
        responses={204: None, **E},
    )
    def delete(self, request: Request, code: str, group_id: int, user_id: int) -> Response:
        user, course = _ctx(request, code)
        if not GroupMembership.objects.filter(
            group_id=group_id, user_id=user_id, left_at__isnull=True
        ).exists() and is_staff(user, course):
            raise DomainError("That student is not in this group.")
        services.member_remove(actor=user, course=course, user_id=user_id)
        return Response(status=204)


class MergeView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Merge this group into another (staff)",
        request=MergeSerializer,
        responses={200: GroupFullSerializer, **E},
    )
    def post(self, request: Request, code: str, group_id: int) -> Response:
        user, course = _ctx(request, code, staff=True)
        data = MergeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        target = services.group_merge(
            actor=user, course=course, source_id=group_id, target_id=data.validated_data["into"]
        )
        return Response(_render(user, course, _one(course, target.pk)))


class UngroupedView(APIView):
    @extend_schema(
        tags=["groups"],
        summary="Active students in no group (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(UngroupedSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = _ctx(request, code)
        if not is_staff(user, course):
            raise NotAllowed("Only the course's instructors and TAs may list ungrouped students.")
        return page_response(
            request,
            students_without_group(course=course),
            lambda p: UngroupedSerializer(p, many=True).data,
        )
