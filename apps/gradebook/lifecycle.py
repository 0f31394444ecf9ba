"""How the gradebook reacts when students leave a group (lifecycle events, in the group change's
transaction): a score entered for the whole group is what its members earned, so each member who
leaves — moved, removed, dropped, merged into another group, or left when the group ended —
keeps it as a carried student entry of their own, if it was given while they were in the group
(a staff override they already have stays).
The group's entry itself stays, for whoever is still in it and for the record."""

from __future__ import annotations

from collections.abc import Iterable

from apps.core.lifecycle import GroupDissolved, GroupMerged, LifecycleEvent, MemberLeft
from apps.core.models import Course
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.gradebook.models import ScoreEntry
from apps.groups.models import Group, GroupMembership


@in_callers_transaction
def carry_group_entries(
    event: LifecycleEvent, group_id: int, group_name: str, user_ids: Iterable[int]
) -> int:
    """Copy the group's entries given while each of `user_ids` was in it to them, as carried
    student entries (one given before they joined was theirs only while they were in the
    group). It replaces an entry carried from an earlier group; a staff override stays.
    Returns how many were written."""
    users = list(user_ids)
    entries = list(ScoreEntry.objects.filter(group_id=group_id).select_related("component"))
    if not users or not entries:
        return 0
    have = {
        (e.component_id, e.student_id): e
        for e in ScoreEntry.objects.filter(
            component_id__in=[e.component_id for e in entries], student_id__in=users
        )
    }
    joined = dict(
        GroupMembership.objects.filter(group_id=group_id, user_id__in=users)
        .order_by("joined_at")
        .values_list("user_id", "joined_at")
    )  # the latest join of each (later rows win)
    made: list[ScoreEntry] = []
    replaced: list[ScoreEntry] = []
    for e in entries:
        for uid in users:
            own = have.get((e.component_id, uid))
            note = f"from group {group_name}: {e.note}".rstrip(": ")[:300]
            if uid in joined and e.updated_at < joined[uid]:
                continue  # scored before they joined: theirs only while they were in it
            if own is None:
                made.append(
                    ScoreEntry(
                        course_id=e.course_id,
                        component_id=e.component_id,
                        student_id=uid,
                        percent=e.percent,
                        note=note,
                        carried=True,
                        updated_by=event.actor,
                    )
                )
            elif own.carried:
                # Given while they were in this group: newer than anything carried before.
                own.percent, own.note, own.updated_by = e.percent, note, event.actor
                replaced.append(own)
    ScoreEntry.objects.bulk_create(made)
    for own in replaced:
        own.save(update_fields=["percent", "note", "updated_by", "updated_at"])
    written = made + replaced
    for e in entries:
        carried = [s.student_id for s in written if s.component_id == e.component_id]
        if carried:
            audit_record(
                actor=event.actor,
                action="gradebook.carried",
                course=event.course,
                obj=e,
                before={"group": group_name, "component": e.component.key},
                after={"students": carried, "percent": str(e.percent), **event.caused_by()},
            )
    return len(written)


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
