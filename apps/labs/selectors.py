"""Reads of the labs a course runs, as its list page and its API both show them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.labs import services
from apps.labs.models import LabRecord


def lab_rows(*, course: Course, user: User) -> list[dict[str, Any]]:
    """Each lab the course runs with its window (`w`, None: always open). Staff: how many
    students `started` and finished (`done`) it; a student: their `record` (None: not started)
    and how many steps they `submitted`. Two queries however many labs."""
    runs = services.course_labs(course)
    if is_staff(user, course):
        done = Counter(
            LabRecord.objects.filter(course=course, completed_at__isnull=False).values_list(
                "lab_key", flat=True
            )
        )
        started = Counter(LabRecord.objects.filter(course=course).values_list("lab_key", flat=True))
        return [
            {"lab": lab, "done": done[lab.key], "started": started[lab.key], "w": w}
            for lab, w in runs
        ]
    mine = {
        r.lab_key: r
        for r in LabRecord.objects.filter(course=course, student=user).prefetch_related("steps")
    }
    return [
        {
            "lab": lab,
            "w": w,
            "record": mine.get(lab.key),
            "submitted": sum(
                1 for s in (mine[lab.key].steps.all() if lab.key in mine else []) if s.submitted_at
            ),
        }
        for lab, w in runs
    ]
