"""Request types for views behind @login_required (django-stubs' documented pattern)."""

from __future__ import annotations

from django.http import HttpRequest

from apps.core.models import Course, User


class AuthedRequest(HttpRequest):
    user: User
    course: Course  # set by course-scoped views; read by the navigation context processor
