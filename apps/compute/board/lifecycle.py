"""How compute reacts when a group ends (lifecycle events, in the group change's transaction).

- Dissolved: its allocation ends at that instant (node and IP free at once, history kept); every
  window it requested or lends a node to that has not ended is closed (requested → declined,
  approved → cancelled) and the other groups in it are e-mailed.
- Merged A into B: B keeps its node and IP and A's allocation ends; if only A had one, it moves
  to B (A's row ends, B's starts, same node and IP). A's windows are closed as on dissolving;
  windows that borrow the moved node now need B's approval. A's run records become B's.
- Run records of a dissolved group stay with it (history, readable by staff); on a merge they,
  and its "affects us too" marks (once per incident), become the target's.
Every reaction is an audit row whose `after` names the event that caused it. What the cloud does
about the same events (keys onto and off nodes) is `cloud/lifecycle.py`, subscribed after these.
"""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from apps.compute.models import (
    Allocation,
    Incident,
    IncidentAffected,
    NodeMove,
    RunRecord,
    SharingWindow,
    StaticIP,
    WindowNode,
)
from apps.core.lifecycle import (
    GroupDissolved,
    GroupMerged,
    LifecycleEvent,
)
from apps.core.models import Course
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction

OPEN = (SharingWindow.Status.REQUESTED, SharingWindow.Status.APPROVED)


@in_callers_transaction
def _end(event: LifecycleEvent, alloc: Allocation, *, why: str) -> None:
    alloc.ended_at = event.at
    alloc.save(update_fields=["ended_at"])
    StaticIP.objects.filter(pk=alloc.static_ip_id).update(status=StaticIP.Status.RESERVED)
    audit_record(
        actor=event.actor,
        action="allocation.released",
        course=event.course,
        obj=alloc,
        before={"group": alloc.group.name, "node": alloc.node.name, "ip": alloc.static_ip.address},
        after=event.caused_by(),
        note=why,
    )


def _active(group_id: int) -> Allocation | None:
    return (
        Allocation.objects.select_for_update()
        .select_related("group", "node", "static_ip")
        .filter(group_id=group_id, ended_at__isnull=True)
        .first()
    )


@in_callers_transaction
def _close_windows(event: LifecycleEvent, group_id: int, group_name: str) -> None:
    """Close every window the group requested or lends a node to that has not ended."""
    involved = (
        SharingWindow.objects.filter(course=event.course, status__in=OPEN, ends_at__gt=event.at)
        .filter(Q(requester_id=group_id) | Q(nodes__owner_id=group_id))
        .values_list("pk", flat=True)
    )
    windows = list(
        SharingWindow.objects.select_for_update().filter(pk__in=list(involved)).order_by("pk")
    )
    for w in windows:
        approved = w.status == SharingWindow.Status.APPROVED
        w.status = SharingWindow.Status.CANCELLED if approved else SharingWindow.Status.DECLINED
        w.note = f"{group_name} no longer exists."
        w.decided_at, w.decided_by = event.at, event.actor
        w.save(update_fields=["status", "note", "decided_at", "decided_by"])
        WindowNode.objects.filter(window=w).update(active=False)
        audit_record(
            actor=event.actor,
            action="window.cancelled" if approved else "window.declined",
            course=event.course,
            obj=w,
            after={"status": w.status, **event.caused_by()},
        )
        _notify_closed(w.pk, group_id)


def _notify_closed(window_id: int, ended_group_id: int) -> None:
    enqueue_on_commit(
        lambda: task_named("compute.notify_window_closed").delay(window_id, ended_group_id),
        what="the window e-mails",
        critical=False,
    )


@in_callers_transaction
def _decline_moves(event: LifecycleEvent, group_id: int, why: str) -> None:
    """A group that ended has no node to move: its open move request is declined."""
    n = NodeMove.objects.filter(group_id=group_id, status=NodeMove.Status.REQUESTED).update(
        status=NodeMove.Status.DECLINED, note=why[:300], decided_at=event.at
    )
    if n:
        audit_record(
            actor=event.actor,
            action="node_move.declined",
            course=event.course,
            obj=event.course,
            after={"group_id": group_id, **event.caused_by()},
            note=why,
        )


def on_group_dissolved(event: GroupDissolved) -> None:
    alloc = _active(event.group_id)
    if alloc is not None:
        _end(event, alloc, why=f"{event.group_name} was dissolved")
    _close_windows(event, event.group_id, event.group_name)
    _decline_moves(event, event.group_id, f"{event.group_name} was dissolved")


@in_callers_transaction
def on_group_merged(event: GroupMerged) -> None:
    source, target = _active(event.source_id), _active(event.target_id)
    if source is not None:
        _end(event, source, why=f"{event.source_name} was merged into {event.target_name}")
    if source is not None and target is None:
        moved = Allocation.objects.create(
            course=event.course,
            group_id=event.target_id,
            node_id=source.node_id,
            static_ip_id=source.static_ip_id,
            started_at=event.at,
        )
        StaticIP.objects.filter(pk=source.static_ip_id).update(status=StaticIP.Status.IN_USE)
        # Requests to borrow the node it brings now wait for the new holder's approval.
        WindowNode.objects.filter(
            node_id=source.node_id,
            owner_id=event.source_id,
            window__status=SharingWindow.Status.REQUESTED,
            window__ends_at__gt=event.at,
        ).update(owner_id=event.target_id)
        audit_record(
            actor=event.actor,
            action="allocation.created",
            course=event.course,
            obj=moved,
            after={
                "group": event.target_name,
                "node": source.node.name,
                "ip": source.static_ip.address,
                **event.caused_by(),
            },
            note=f"moved from {event.source_name}",
        )
    _close_windows(event, event.source_id, event.source_name)
    _decline_moves(event, event.source_id, f"{event.source_name} was merged")
    # "Affects us too" marks become the merged group's: once per incident, never on its own report.
    marks = IncidentAffected.objects.filter(group_id=event.source_id)
    already = IncidentAffected.objects.filter(group_id=event.target_id).values("incident_id")
    own = Incident.objects.filter(group_id=event.target_id).values("pk")
    marks.filter(Q(incident_id__in=already) | Q(incident_id__in=own)).delete()
    marks.update(group_id=event.target_id)
    # Run records go with the people who made them: the merged group reads and reruns them.
    moved_runs = RunRecord.objects.filter(group_id=event.source_id).update(group_id=event.target_id)
    if moved_runs:
        audit_record(
            actor=event.actor,
            action="run.moved",
            course=event.course,
            obj=event.course,
            after={"runs": moved_runs, "to": event.target_name, **event.caused_by()},
        )


def dissolve_preview(course: Course, group_id: int) -> list[str]:
    """What dissolving the group does to compute, for the confirmation page."""
    out = []
    alloc = (
        Allocation.objects.filter(group_id=group_id, ended_at__isnull=True)
        .select_related("node", "static_ip")
        .first()
    )
    if alloc is not None:
        out.append(f"{alloc.node.name} and {alloc.static_ip.address} become free at once.")
    n = (
        SharingWindow.objects.filter(course=course, status__in=OPEN, ends_at__gt=timezone.now())
        .filter(Q(requester_id=group_id) | Q(nodes__owner_id=group_id))
        .values("pk")
        .distinct()
        .count()
    )
    if n:
        out.append(f"{n} sharing window(s) close; the other groups in them are e-mailed.")
    return out


def dissolved_group_holdings(course_id: int) -> list[str]:
    """The `check_course` invariant: no ended group holds a node or IP, a live window or an open
    request to move nodes."""
    found = [
        f"{a.group.name} (ended) still holds {a.node.name} and {a.static_ip.address}"
        for a in Allocation.objects.filter(
            course_id=course_id, ended_at__isnull=True, group__dissolved_at__isnull=False
        ).select_related("group", "node", "static_ip")
    ]
    found += [
        f"window #{w.pk} of {w.requester.name} (ended) is still {w.status}"
        for w in SharingWindow.objects.filter(
            course_id=course_id, status__in=OPEN, requester__dissolved_at__isnull=False
        )
        .exclude(ends_at__lte=timezone.now())
        .select_related("requester")
    ]
    found += [
        f"{m.group.name} (ended) still asks to move off {m.from_node.name}"
        for m in NodeMove.objects.filter(
            course_id=course_id,
            status=NodeMove.Status.REQUESTED,
            group__dissolved_at__isnull=False,
        ).select_related("group", "from_node")
    ]
    return found


def windows_on_held_nodes(course_id: int) -> list[str]:
    """No window that has not ended lends a node its lending group no longer holds (a node
    move re-points them, `moves._windows_follow`)."""
    now = timezone.now()
    held = set(
        Allocation.objects.filter(course_id=course_id, ended_at__isnull=True).values_list(
            "group_id", "node_id"
        )
    )
    rows = (
        WindowNode.objects.filter(
            window__course_id=course_id, window__status__in=OPEN, window__ends_at__gt=now
        )
        .select_related("node", "owner")
        .order_by("window_id", "rank")
    )
    return [
        f"Window #{r.window_id} borrows {r.node.name} from {r.owner.name}, which no longer "
        "holds it."
        for r in rows
        if (r.owner_id, r.node_id) not in held
    ]
