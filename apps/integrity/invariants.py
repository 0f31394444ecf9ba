"""The similarity check's invariant for `check_course`.

What a pair does when its groups change: nothing. A check is a record of what was handed in
by the groups as they stood when the archive was uploaded, so its pairs keep pointing at those
groups, as history: a member who moves, a group merged into another or dissolved leaves every
pair (and its files) as it was, and the page still names the group as it was then. No app
reacts to the change, so nothing can lag behind it; what the check holds is that each pair
joins two groups of the check's course, each by its own files in the check, and that both
groups were live when the check was made (a group dissolved later, or merged away, is still a
legal end of a pair; a group dissolved before the upload, or made after it, never is).
"""

from __future__ import annotations

from django.db.models import F, Q

from apps.integrity.models import SimilarityPair


def pairs_across_groups(course_id: int) -> list[str]:
    made = F("check_run__created_at")
    bad = SimilarityPair.objects.filter(check_run__course_id=course_id).filter(
        Q(group_a=F("group_b"))
        | ~Q(group_a__course_id=course_id)
        | ~Q(group_b__course_id=course_id)
        | ~Q(file_a__group=F("group_a"))
        | ~Q(file_b__group=F("group_b"))
        | Q(group_a__created_at__gt=made)
        | Q(group_b__created_at__gt=made)
        | Q(group_a__dissolved_at__lt=made)
        | Q(group_b__dissolved_at__lt=made)
    )
    return [
        f"similarity pair #{p.pk} of check #{p.check_run_id} does not join two groups of the "
        "course, live when the check was made, by their own files"
        for p in bad.only("pk", "check_run_id")
    ]
