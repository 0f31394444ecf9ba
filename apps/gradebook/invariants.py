"""What `check_course` holds the gradebook to (registered in `apps.py`)."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.autograder.models import QuestionSet
from apps.core.models import Course, GradingComponent, Membership
from apps.gradebook.models import ScoreEntry
from apps.gradebook.sources import source_for
from apps.groups.models import GroupMembership


def released_only(course_id: int) -> list[str]:
    """No score a student can read counts an assignment whose results are not released. The
    released assignments are read here, apart from the source; the source says what it counted."""
    course = Course.objects.get(pk=course_id)
    used = set()
    for source, blend in GradingComponent.objects.filter(course=course).values_list(
        "source", "blend"
    ):
        used |= {s for s in [source, *(blend or {})] if s.partition(":")[0] == "autograder"}
    if not used:
        return []
    released = set(
        QuestionSet.objects.filter(
            course=course, assignment__isnull=False, released_at__lte=timezone.now()
        ).values_list("assignment__code", flat=True)
    )
    emails: dict[int, str] = {}
    out = []
    for name in sorted(used):
        read = source_for(name)
        if read is None:
            continue
        for sid, v in read(course, None, {}).items():
            if early := sorted(set(v.counted) - released):
                emails = emails or dict(
                    Membership.objects.filter(course=course).values_list("user_id", "user__email")
                )
                out.append(
                    f"{emails.get(sid, sid)}: {name} counts {', '.join(early)}, "
                    "whose results are not released"
                )
    return out


def group_scores_kept(course_id: int) -> list[str]:
    """Each student who left a group keeps, as an entry of their own, every score entered for
    that group while they were in it (unless the group was re-scored after they left)."""
    spans = GroupMembership.objects.filter(course_id=course_id, left_at__isnull=False)
    entries = list(
        ScoreEntry.objects.filter(course_id=course_id, group__isnull=False).values_list(
            "group_id", "component_id", "component__key", "updated_at", "group__name"
        )
    )
    if not entries:
        return []
    own = set(
        ScoreEntry.objects.filter(course_id=course_id, student__isnull=False).values_list(
            "student_id", "component_id"
        )
    )
    by_group: dict[int, list[tuple[int, str, dt.datetime, str]]] = {}
    for gid, cid, key, at, name in entries:
        by_group.setdefault(gid, []).append((cid, key, at, name))
    out = []
    rows = spans.filter(group_id__in=list(by_group))
    for uid, email, gid, joined, left in rows.values_list(
        "user_id", "user__email", "group_id", "joined_at", "left_at"
    ):
        for cid, key, at, name in by_group[gid]:
            if left is not None and joined <= at < left and (uid, cid) not in own:
                out.append(f"{email} left {name} without its {key} score, given while a member")
    return out
