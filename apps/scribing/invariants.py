"""Scribing's invariants for `check_course`."""

from __future__ import annotations

from django.db.models import Count

from apps.scribing.models import ScribeDuty


def one_duty_per_lecture(course_id: int) -> list[str]:
    """No student holds two scribe duties for one lecture."""
    doubled = (
        ScribeDuty.objects.filter(course_id=course_id)
        .values("student__email", "lecture__number")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .order_by("lecture__number", "student__email")
    )
    return [
        f"{row['student__email']} holds {row['n']} duties for lecture {row['lecture__number']}"
        for row in doubled
    ]
