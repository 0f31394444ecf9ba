"""How the gradebook reacts when students leave a group (lifecycle events, in the group change's
transaction): a score entered for the whole group is what its members earned, so each member who
leaves — moved, removed, dropped, merged into another group, or left when the group ended —
keeps it as a student entry of their own (unless they already have one for that component).
The group's entry itself stays, for whoever is still in it and for the record."""

from __future__ import annotations

from collections.abc import Iterable

from apps.core.lifecycle import GroupDissolved, GroupMerged, LifecycleEvent, MemberLeft
from apps.core.models import Course
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.gradebook.models import ScoreEntry
from apps.groups.models import Group


@in_callers_transaction
def carry_group_entries(
    event: LifecycleEvent, group_id: int, group_name: str, user_ids: Iterable[int]
) -> int:
    """Copy the group's entries to each of `user_ids` as student entries. Returns how many."""
    users = list(user_ids)
    entries = list(ScoreEntry.objects.filter(group_id=group_id).select_related("component"))
    if not users or not entries:
        return 0
    have = set(
        ScoreEntry.objects.filter(
            component_id__in=[e.component_id for e in entries], student_id__in=users
        ).values_list("component_id", "student_id")
    )
    made = [
        ScoreEntry(
            course_id=e.course_id,
            component_id=e.component_id,
            student_id=uid,
            percent=e.percent,
            note=f"from group {group_name}: {e.note}".rstrip(": ")[:300],
            updated_by=event.actor,
        )
        for e in entries
        for uid in users
        if (e.component_id, uid) not in have
    ]
    ScoreEntry.objects.bulk_create(made)
    for e in entries:
        carried = [s.student_id for s in made if s.component_id == e.component_id]
        if carried:
            audit_record(
                actor=event.actor,
                action="gradebook.carried",
                course=event.course,
                obj=e,
                before={"group": group_name, "component": e.component.key},
                after={"students": carried, "percent": str(e.percent), **event.caused_by()},
            )
    return len(made)


def _name(group_id: int) -> str:
    return Group.objects.filter(pk=group_id).values_list("name", flat=True).first() or "?"


def on_member_left(event: MemberLeft) -> None:
    carry_group_entries(event, event.group_id, _name(event.group_id), [event.user_id])


def on_group_dissolved(event: GroupDissolved) -> None:
    carry_group_entries(event, event.group_id, event.group_name, event.member_ids)


def on_group_merged(event: GroupMerged) -> None:
    carry_group_entries(event, event.source_id, event.source_name, event.member_ids)


def dissolve_preview(course: Course, group_id: int) -> list[str]:
    """What dissolving the group does to the gradebook, for the confirmation page."""
    keys = list(
        ScoreEntry.objects.filter(group_id=group_id).values_list("component__key", flat=True)
    )
    if not keys:
        return []
    return [f"Its gradebook entries ({', '.join(keys)}) become each member's own entries."]
