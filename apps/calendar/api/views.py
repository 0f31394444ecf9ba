from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from apps.calendar.api.serializers import CourseDetailSerializer
from apps.core.api.exceptions import ErrorSerializer
from apps.core.api.views import ERRORS, with_role
from apps.core.models import Course, GradingComponent, User
from apps.core.selectors import course_list


class CourseDetailView(generics.RetrieveAPIView):
    """One of your courses with its policy, lectures, recess days, assignments, milestones
    and grading components. 404 for a course you do not belong to."""

    serializer_class = CourseDetailSerializer
    lookup_field = "code"

    def get_object(self) -> Course:
        try:
            return super().get_object()
        except Http404:
            raise NotFound("No such course, or you are not a member of it.") from None

    def get_queryset(self) -> QuerySet[Course]:
        if getattr(self, "swagger_fake_view", False):
            return Course.objects.none()
        user: User = self.request.user  # type: ignore[assignment]
        return with_role(course_list(user=user), user).prefetch_related(
            "lectures",
            "recess_days",
            "assignments",
            "milestones",
            Prefetch(
                "grading_components",
                queryset=GradingComponent.objects.select_related("parent"),
            ),
        )

    @extend_schema(
        responses={
            200: CourseDetailSerializer,
            **ERRORS,
            404: OpenApiResponse(ErrorSerializer, description="No such course, or not yours."),
        }
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)
