"""Reads: a student's own record; every student's summary (counts per kind and the score) in a
fixed number of queries, for the staff page, the API and the gradebook."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import Count, QuerySet
from django.utils import timezone

from apps.calendar.models import Lecture
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.participation.models import ParticipationEvent
from apps.participation.rules import participation_score


def event_list(*, user: User, course: Course) -> QuerySet[ParticipationEvent]:
    qs = ParticipationEvent.objects.filter(course=course).select_related("student", "recorded_by")
    return qs if is_staff(user, course) else qs.filter(student=user)


@dataclass
class Summary:
    counts: dict[str, int] = field(default_factory=dict)
    held: int = 0

    @property
    def attended(self) -> int:
        return self.counts.get("attendance", 0)

    @property
    def contributions(self) -> int:
        return sum(n for k, n in self.counts.items() if k != "attendance")

    @property
    def score(self) -> float | None:
        return participation_score(self.attended, self.held, self.contributions)


def lectures_held(course: Course) -> int:
    return Lecture.objects.filter(course=course, starts_at__lt=timezone.now()).count()


def summaries(course: Course, student_ids: Collection[int] | None = None) -> dict[int, Summary]:
    """Every student with at least one event (or those asked for), two queries."""
    held = lectures_held(course)
    rows = ParticipationEvent.objects.filter(course=course)
    if student_ids is not None:
        rows = rows.filter(student_id__in=student_ids)
    out: dict[int, Summary] = defaultdict(lambda: Summary(held=held))
    for sid, kind, n in (
        rows.values("student_id", "kind")
        .annotate(n=Count("id"))
        .values_list("student_id", "kind", "n")
    ):
        out[sid].counts[kind] = n
    if student_ids is not None:
        for sid in student_ids:
            out[sid]
    return dict(out)
