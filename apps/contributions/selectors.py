"""Who sees which proposals: staff all; a student those they are an author of, and every
accepted one (then it is the course's question); never another's under review."""

from __future__ import annotations

from collections import Counter

from django.db.models import Q, QuerySet

from apps.contributions.models import QuestionProposal
from apps.core.models import Course, User
from apps.core.permissions import is_staff


def proposal_list(*, user: User, course: Course) -> QuerySet[QuestionProposal]:
    qs = QuestionProposal.objects.filter(course=course).select_related("proposer", "question")
    if is_staff(user, course):
        return qs
    return qs.filter(Q(authors=user) | Q(status="accepted")).distinct()


def accepted_per_student(course: Course) -> Counter[int]:
    """How many accepted questions credit each student (for the enhancements component)."""
    rows = QuestionProposal.authors.through.objects.filter(
        questionproposal__course=course, questionproposal__status="accepted"
    ).values_list("user_id", flat=True)
    return Counter(rows)
