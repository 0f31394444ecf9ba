"""The API side of the shared deadline-edit flow: `impact` (GET, read-only) and `patch` (a move
needs `confirm: true`). The app that owns the deadline subclasses it with its impact and update
functions, so assignments and milestones answer alike."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.calendar.api.serializers_events import (
    DeadlineEditSerializer,
    ImpactQuerySerializer,
    ImpactSerializer,
)
from apps.calendar.moves import MoveImpact
from apps.core.api.helpers import api_course
from apps.core.errors import NotFound
from apps.core.models import Course


class DeadlineImpactBase(APIView):
    """GET …/impact/?due_at=: who a move would reach, before anything changes."""

    load: Callable[[Course, int], Any]
    impact_of: Callable[[Course, Any, dt.datetime], MoveImpact]

    def get(self, request: Request, code: str, **ids: int) -> Response:
        _, course = api_course(request, code, staff=True)
        q = ImpactQuerySerializer(data=request.query_params)
        q.is_valid(raise_exception=True)
        obj = type(self).load(course, next(iter(ids.values())))
        if obj is None:
            raise NotFound("No such deadline in this course.")
        impact = type(self).impact_of(course, obj, q.validated_data["due_at"])
        return Response(ImpactSerializer(impact.as_dict()).data)


def edit_payload(request: Request, serializer: type[DeadlineEditSerializer]) -> dict[str, Any]:
    data = serializer(data=request.data)
    data.is_valid(raise_exception=True)
    return dict(data.validated_data)
