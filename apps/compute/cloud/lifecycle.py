"""How the cloud follows people between groups (lifecycle events, in the change's transaction):
the nodes whose keys (or OS Login grants) change get a job to bring them in line, sent once the
change commits. Subscribed after the board's reactions (`board/lifecycle.py`), so a merge finds
the node already with the group that holds it now."""

from __future__ import annotations

from apps.compute.cloud import sync
from apps.core.lifecycle import GroupMerged, MemberLeft, StudentDropped
from apps.core.transactions import in_callers_transaction


@in_callers_transaction
def on_group_merged(event: GroupMerged) -> None:
    """The merged members' keys go onto the node the target holds, and off the source's."""
    sync.groups_changed(
        event.course.pk,
        [event.target_id],
        f"{event.source_name} was merged into {event.target_name}",
    )


@in_callers_transaction
def on_member_left(event: MemberLeft) -> None:
    """The member's keys leave the group's node (and join the new group's, if they moved)."""
    groups = [event.group_id, event.to_group_id or 0]
    sync.groups_changed(event.course.pk, groups, f"user {event.user_id} left a group")


@in_callers_transaction
def on_student_dropped(event: StudentDropped) -> None:
    from apps.groups.models import GroupMembership

    groups = GroupMembership.objects.filter(course=event.course, user_id=event.user_id)
    sync.groups_changed(
        event.course.pk,
        list(groups.values_list("group_id", flat=True)),
        f"user {event.user_id} was dropped",
    )
