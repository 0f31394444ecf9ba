"""Reads of similarity checks, scoped to staff (students never see them)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from apps.core.errors import NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile


def _staff(user: Any, course: Course) -> None:
    if not is_staff(user, course):
        raise NotAllowed("Only the course's instructors and TAs see similarity checks.")


def check_list(*, user: User, course: Course) -> QuerySet[SimilarityCheck]:
    _staff(user, course)
    return SimilarityCheck.objects.filter(course=course).select_related("created_by", "milestone")


def check_get(*, user: User, course: Course, check_id: int) -> SimilarityCheck:
    c = check_list(user=user, course=course).filter(pk=check_id).first()
    if c is None:
        raise NotFound("No such similarity check in this course.")
    return c


def pair_list(
    *, check: SimilarityCheck, q: str = "", flagged_only: bool = False
) -> QuerySet[SimilarityPair]:
    """The check's group pairs, highest share first; `q` matches part of either group's name.
    The two files come with their paths only: their text (up to 400,000 characters each) is
    read for one pair's page, never for a list."""
    rows = (
        SimilarityPair.objects.filter(check_run=check)
        .select_related("group_a", "group_b", "file_a", "file_b")
        .defer("file_a__text", "file_b__text")
    )
    if q:
        rows = rows.filter(Q(group_a__name__icontains=q) | Q(group_b__name__icontains=q))
    if flagged_only:
        rows = rows.filter(percent__gte=check.threshold)
    return rows.order_by("-percent", "group_a__name", "group_b__name", "pk")


def pair_get(*, check: SimilarityCheck, pair_id: int) -> SimilarityPair:
    p = pair_list(check=check).filter(pk=pair_id).first()
    if p is None:
        raise NotFound("No such pair in this check.")
    return p


def pair_files(pair: SimilarityPair) -> list[dict[str, Any]]:
    """Each matching file pair of `pair` with both files' text, best first."""
    ids = {f["file_a"] for f in pair.files} | {f["file_b"] for f in pair.files}
    files = {
        f.pk: f for f in SubmittedFile.objects.filter(check_run_id=pair.check_run_id, pk__in=ids)
    }
    out = []
    for f in pair.files:
        a, b = files.get(f["file_a"]), files.get(f["file_b"])
        if a is not None and b is not None:
            out.append({**f, "a": a, "b": b})
    return out


def declarations(check: SimilarityCheck, group_ids: list[int]) -> dict[int, Any]:
    """Group id → its record of the check's milestone (declared sources and AI use), if any."""
    if check.milestone_id is None:
        return {}
    from apps.milestones.models import GroupMilestone

    rows = GroupMilestone.objects.filter(milestone_id=check.milestone_id, group_id__in=group_ids)
    return {r.group_id: r for r in rows}
