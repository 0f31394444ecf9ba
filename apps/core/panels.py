from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.http import HttpRequest

from apps.core.models import Course, Role


def people_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    counts = course.memberships.aggregate(
        students=Count("id", filter=Q(role=Role.STUDENT, is_active=True)),
        tas=Count("id", filter=Q(role=Role.TA, is_active=True)),
        instructors=Count("id", filter=Q(role=Role.INSTRUCTOR, is_active=True)),
        dropped=Count("id", filter=Q(is_active=False)),
    )
    return {"counts": counts}
