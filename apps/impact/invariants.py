"""What `check_course` holds the impact app to (registered in `apps.py`)."""

from __future__ import annotations

from apps.impact.models import GroupImpact, ImpactScoreGiven


def score_is_last_given(course_id: int) -> list[str]:
    """A group's current impact score (what the impact pages show) is the last one in its
    history (what the gradebook reads), and a group with no current score was last cleared."""
    last: dict[int, object] = {}
    names: dict[int, str] = {}
    for gid, name, percent in (
        ImpactScoreGiven.objects.filter(course_id=course_id)
        .order_by("given_at", "pk")
        .values_list("group_id", "group__name", "percent")
    ):
        last[gid], names[gid] = percent, name
    now: dict[int, object] = {}
    for gid, name, percent in GroupImpact.objects.filter(course_id=course_id).values_list(
        "group_id", "group__name", "percent"
    ):
        now[gid] = percent
        names.setdefault(gid, name)
    return [
        f"{names[gid]}: impact score {now.get(gid)} but its history last gave {last.get(gid)}"
        for gid in sorted(set(last) | set(now))
        if last.get(gid) != now.get(gid)
    ]
