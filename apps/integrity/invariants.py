"""The similarity check's invariant for `check_course`."""

from __future__ import annotations

from django.db.models import F, Q

from apps.integrity.models import SimilarityPair


def pairs_across_groups(course_id: int) -> list[str]:
    bad = SimilarityPair.objects.filter(check_run__course_id=course_id).filter(
        Q(group_a=F("group_b"))
        | ~Q(group_a__course_id=course_id)
        | ~Q(group_b__course_id=course_id)
        | ~Q(file_a__group=F("group_a"))
        | ~Q(file_b__group=F("group_b"))
    )
    return [
        f"similarity pair #{p.pk} of check #{p.check_run_id} does not join two groups of the "
        "course by their own files"
        for p in bad.only("pk", "check_run_id")
    ]
