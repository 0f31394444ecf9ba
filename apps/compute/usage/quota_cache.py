"""Drop a course's cached quota standings (`quotas.standing_of`) whenever a row they are
computed from is written: an allocation (start, end, move), a node's status change (a running
interval opening or closing), a node (its GPU count), a group (renamed, dissolved), a group's
own quota, the course's usage policy. Signals, so the admin, `load_course` and every service
invalidate alike; the one bulk update of these rows (`cloud.inventory`, a node's fields) drops
the version itself. The period rolling over needs no write: the hours are computed at the
request's clock from the cached rows."""

from __future__ import annotations

from typing import Any

from apps.compute.models import Allocation, Node, NodeStatusChange
from apps.compute.quota_version import quota_version
from apps.compute.usage_models import GroupQuota, UsagePolicy
from apps.core.versions import drop_version_on_write
from apps.groups.models import Group


def _of_course(instance: Any) -> str:
    return quota_version(instance.course_id)


def _of_node(instance: NodeStatusChange) -> str | None:
    if NodeStatusChange._meta.get_field("node").is_cached(instance):
        course_id: int | None = instance.node.course_id
    else:  # (deleted with its node: the node's own signal drops the version)
        course_id = (
            Node.objects.filter(pk=instance.node_id).values_list("course_id", flat=True).first()
        )
    return quota_version(course_id) if course_id is not None else None


def connect() -> None:
    for model in (Allocation, Node, Group, GroupQuota, UsagePolicy):
        drop_version_on_write(model, _of_course)
    drop_version_on_write(NodeStatusChange, _of_node)
