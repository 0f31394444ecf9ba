"""What sends the cloud a job: any saved change to who holds a node, who is in a group, whose
keys exist or which windows are open queues bringing the affected nodes (or the course's window
rules) in line, in the same transaction as the change (the job row) and sent once it commits.
Bulk `update()`s bypass these; the reconcile task (every 2 minutes) catches what they miss."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from apps.compute.cloud import sync as cloud
from apps.compute.models import Allocation, SharingWindow, SshKey
from apps.groups.models import GroupMembership


@receiver(post_save, sender=Allocation, dispatch_uid="cloud-allocation")
def _allocation_saved(sender: Any, instance: Allocation, created: bool, **kw: Any) -> None:
    what = "allocated" if instance.ended_at is None else "released"
    cloud.nodes_changed(
        instance.course_id,
        [instance.node_id],
        f"{instance.node} {what} (allocation #{instance.pk})",
    )


@receiver(post_save, sender=GroupMembership, dispatch_uid="cloud-membership")
def _membership_saved(sender: Any, instance: GroupMembership, **kw: Any) -> None:
    cloud.groups_changed(
        instance.course_id, [instance.group_id], f"membership of user {instance.user_id} changed"
    )


def _keys_changed(instance: SshKey, what: str) -> None:
    rows = GroupMembership.objects.filter(user_id=instance.user_id, left_at__isnull=True)
    for course_id, group_id in rows.values_list("course_id", "group_id"):
        cloud.groups_changed(course_id, [group_id], f"user {instance.user_id} {what} a key")


@receiver(post_save, sender=SshKey, dispatch_uid="cloud-key-added")
def _key_saved(sender: Any, instance: SshKey, **kw: Any) -> None:
    _keys_changed(instance, "added")


@receiver(post_delete, sender=SshKey, dispatch_uid="cloud-key-removed")
def _key_deleted(sender: Any, instance: SshKey, **kw: Any) -> None:
    _keys_changed(instance, "removed")


@receiver(post_save, sender=SharingWindow, dispatch_uid="cloud-window")
def _window_saved(sender: Any, instance: SharingWindow, created: bool, **kw: Any) -> None:
    if created and instance.status == SharingWindow.Status.REQUESTED:
        return  # nothing opens before it is approved
    nodes = list(instance.nodes.values_list("node_id", flat=True))
    why = f"window #{instance.pk} {instance.status}"
    cloud.nodes_changed(instance.course_id, nodes, why)
    cloud.rules_changed(instance.course_id, why)
