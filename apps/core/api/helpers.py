"""Shared by every course-scoped API view: the course from the URL (404 for non-members, 403 for
non-staff on staff endpoints) and the documented error responses."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.exceptions import ErrorSerializer
from apps.core.api.pagination import StandardPagination
from apps.core.errors import NotAllowed
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.selectors import course_get

DEFAULT_ERRORS = {
    400: "Invalid input (the message says which rule).",
    401: "Not logged in.",
    403: "Not allowed for your role.",
    404: "No such course or object, or not yours.",
    409: "Refused by the current state (taken, overlapping, already done).",
}


def api_course(
    request: Request, code: str, *, staff: bool = False, student: bool = False
) -> tuple[User, Course]:
    """The caller and the course, after the role check: 404 for non-members, 403 for a role the
    operation is not for. Views call it before validating input, so a refused caller learns
    nothing from validation messages (the permission matrix checks the order)."""
    user: User = request.user  # type: ignore[assignment]
    course = course_get(user=user, code=code)
    if staff and not is_staff(user, course):
        raise NotAllowed("Only the course's instructors and TAs may do this.")
    if student and not is_student(user, course):
        raise NotAllowed("Only students of the course do this; staff have their own pages.")
    return user, course


def error_responses(**overrides: str) -> dict[int, OpenApiResponse]:
    """{400: …, 401: …, 403: …, 404: …, 409: …} for extend_schema; override a text with e.g.
    error_responses(e409="Overlapping window")."""
    texts = DEFAULT_ERRORS | {int(k.removeprefix("e")): v for k, v in overrides.items()}
    return {
        code: OpenApiResponse(ErrorSerializer, description=text) for code, text in texts.items()
    }


PAGE_PARAMETERS = [
    OpenApiParameter("page", int, description="Page number, from 1.", required=False),
    OpenApiParameter(
        "page_size", int, description="Rows per page (default 50, at most 500).", required=False
    ),
]


@cache
def paginated(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The page envelope every list answers with, for the schema: count, next, previous,
    results."""
    name = serializer_class.__name__.removesuffix("Serializer")
    return type(
        f"Paginated{name}List",
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(help_text="Rows in the whole (filtered) list."),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )


def page_response(
    request: Request,
    rows: Any,
    render: Callable[[list[Any]], Any],
) -> Response:
    """One page of `rows` (a queryset or list) with the standard envelope; `render` turns the
    page's rows into JSON-able data (e.g. `lambda page: Serializer(page, many=True).data`)."""
    paginator = StandardPagination()
    page = paginator.paginate_queryset(rows, request)
    return paginator.get_paginated_response(render(list(page or [])))
