"""A stop courseops makes on its own (a group's GPU-hour quota used up, the nightly shutdown):
the provider's stop as a cloud job (`cloud.request`, so it ends done or failed with the cloud's
reason, and keeps local SSD data as the provider's stop does by default), its `AutoStop` row and
its audit row, all in the caller's transaction."""

from __future__ import annotations

import datetime as dt

from apps.compute.cloud import sync as cloud
from apps.compute.models import CloudOp, Node
from apps.compute.usage_models import AutoStop
from apps.core.models import Course
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction, require_own_transaction

AUDIT_ACTION = "compute.auto_stop"


def stop_pending(node_id: int) -> bool:
    return CloudOp.objects.filter(
        node_id=node_id, kind=CloudOp.Kind.STOP, status__in=cloud.PENDING
    ).exists()


@in_callers_transaction
def auto_stop(
    *, course: Course, node: Node, group_id: int | None, cause: str, detail: str, now: dt.datetime
) -> AutoStop:
    """Queue the node's stop and record why, with its audit row. Must run inside the caller's
    transaction (the row, the job and the audit row commit together); raises RuntimeError
    otherwise."""
    require_own_transaction("auto_stop must run inside its caller's transaction")
    op = cloud.request(course.pk, CloudOp.Kind.STOP, node.pk, why=f"{cause}: {detail}")
    stop = AutoStop.objects.create(
        course=course, node=node, group_id=group_id, op=op, cause=cause, detail=detail[:300], at=now
    )
    audit_record(
        actor=None,
        action=AUDIT_ACTION,
        course=course,
        obj=node,
        after={"job": op.pk, "cause": cause, "group": group_id, "stop": stop.pk},
        note=detail,
    )
    return stop


def stops_without_audit(course_id: int) -> list[str]:
    """The `check_course` invariant: no stop courseops made on its own lacks its audit row."""
    from apps.core.models import AuditEvent

    audited = {
        (e.get("stop") if isinstance(e, dict) else None)
        for e in AuditEvent.objects.filter(course_id=course_id, action=AUDIT_ACTION).values_list(
            "after", flat=True
        )
    }
    return [
        f"{s.get_cause_display()} stop #{s.pk} of {s.node.name} (job #{s.op_id}) has no audit row"
        for s in AutoStop.objects.filter(course_id=course_id).select_related("node")
        if s.pk not in audited
    ]
