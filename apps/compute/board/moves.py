"""Moving a group off a failed node: the group asks, staff approve the move to a spare ready node
in the same region (the group keeps its static IP, so its SSH address and firewall rules stay),
or decline with a reason. Both ends are audited and the group is e-mailed."""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.compute.board.selectors import group_id_of
from apps.compute.board.services import _free_nodes, _lock_inventory, require_staff
from apps.compute.models import Allocation, Node, NodeMove, SharingWindow, WindowNode
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction

MOVABLE = (Node.Status.FAILED, Node.Status.MAINTENANCE)


def move_request(*, actor: User, course: Course) -> NodeMove:
    """A member asks to leave their group's failed (or long-maintained) node."""
    gid = group_id_of(user=actor, course=course)
    if gid is None:
        raise NotAllowed("Join a group first.")
    alloc = (
        Allocation.objects.filter(course=course, group_id=gid, ended_at__isnull=True)
        .select_related("node")
        .first()
    )
    if alloc is None:
        raise Conflict("Your group holds no node to move from.")
    if alloc.node.status not in MOVABLE:
        raise Conflict(
            f"{alloc.node.name} is {alloc.node.get_status_display().lower()}; a move is offered "
            "when staff mark it failed or in maintenance. Report an incident first."
        )
    try:
        with transaction.atomic():
            move = NodeMove.objects.create(
                course=course, group_id=gid, from_node=alloc.node, requested_by=actor
            )
            audit_record(
                actor=actor,
                action="node_move.requested",
                course=course,
                obj=move,
                after={"from": alloc.node.name},
            )
    except IntegrityError:
        raise Conflict("Your group has already asked; the staff will answer.") from None
    return move


def _open(course: Course, move_id: int) -> NodeMove:
    move = (
        NodeMove.objects.select_for_update()
        .select_related("group", "from_node")
        .filter(course=course, pk=move_id)
        .first()
    )
    if move is None:
        raise NotFound("No such move request.")
    if move.status != NodeMove.Status.REQUESTED:
        raise Conflict(f"That request is already {move.get_status_display().lower()}.")
    return move


def move_approve(
    *, actor: User, course: Course, move_id: int, node_id: int | None = None
) -> NodeMove:
    """Staff move the group to a spare ready node (the first free one in the IP's region unless
    named): its allocation ends and a new one starts with the same IP, in one transaction."""
    require_staff(actor, course)
    with transaction.atomic():
        _lock_inventory(course)
        move = _open(course, move_id)
        alloc = (
            Allocation.objects.select_for_update()
            .select_related("static_ip", "node")
            .filter(group=move.group, ended_at__isnull=True)
            .first()
        )
        if alloc is None:
            raise Conflict(f"{move.group.name} holds no node any more.")
        spare = [n for n in _free_nodes(course) if n.region == alloc.static_ip.region]
        node = next((n for n in spare if node_id is None or n.pk == node_id), None)
        if node is None:
            raise DomainError(
                "That node is not a free ready node in the group's region."
                if node_id
                else f"No spare ready node in {alloc.static_ip.region}; free or repair one first.",
                field="node",
            )
        now = timezone.now()
        alloc.ended_at = now
        alloc.save(update_fields=["ended_at"])
        Allocation.objects.create(
            course=course,
            group=move.group,
            node=node,
            static_ip=alloc.static_ip,
            started_at=now,
        )
        move.status, move.to_node = NodeMove.Status.DONE, node
        move.decided_by, move.decided_at = actor, now
        move.save(update_fields=["status", "to_node", "decided_by", "decided_at"])
        repointed = _windows_follow(actor, course, move, alloc.node, node, now)
        audit_record(
            actor=actor,
            action="node_move.done",
            course=course,
            obj=move,
            after={
                "group": move.group.name,
                "from": alloc.node.name,
                "to": node.name,
                "windows": repointed,
            },
        )
        _notify(move.pk)
    return move


@in_callers_transaction
def _windows_follow(
    actor: User, course: Course, move: NodeMove, old: Node, new: Node, now: dt.datetime
) -> list[int]:
    """Every window that has not ended and borrows the moved node from the moving group now
    runs on its new node (same group, same IP); every group in it is told. The old node lends
    nothing any more, so a repaired node comes back free of old windows. Returns the windows."""
    rows = list(
        WindowNode.objects.select_for_update()
        .filter(
            node=old,
            owner=move.group,
            window__status__in=(SharingWindow.Status.REQUESTED, SharingWindow.Status.APPROVED),
            window__ends_at__gt=now,
        )
        .select_related("window")
        .order_by("window_id")
    )
    for row in rows:
        w = row.window
        row.node = new
        try:
            with transaction.atomic():
                row.save(update_fields=["node"])
            w.note = (
                f"Runs on {new.name} now: {move.group.name} moved off {old.name}. Download the "
                "window's launch files again."
            )[:300]
            w.save(update_fields=["note"])
        except IntegrityError:  # the new node is already lent at that time: the window ends
            w.status = (
                SharingWindow.Status.CANCELLED
                if w.status == SharingWindow.Status.APPROVED
                else SharingWindow.Status.DECLINED
            )
            w.note = f"{move.group.name} moved off {old.name}; {new.name} is busy then."
            w.decided_at, w.decided_by = now, actor
            w.save(update_fields=["status", "note", "decided_at", "decided_by"])
            WindowNode.objects.filter(window=w).update(active=False)
        audit_record(
            actor=actor,
            action="window.node_moved",
            course=course,
            obj=w,
            before={"node": old.name},
            after={"node": new.name, "move": move.pk},
        )
        _notify_window(w.pk)
    return [r.window_id for r in rows]


def move_decline(*, actor: User, course: Course, move_id: int, note: str) -> NodeMove:
    require_staff(actor, course)
    if not note.strip():
        raise DomainError("Say why, for the group (e.g. “back within the hour”).", field="note")
    with transaction.atomic():
        move = _open(course, move_id)
        move.status, move.note = NodeMove.Status.DECLINED, note.strip()[:300]
        move.decided_by, move.decided_at = actor, timezone.now()
        move.save(update_fields=["status", "note", "decided_by", "decided_at"])
        audit_record(
            actor=actor, action="node_move.declined", course=course, obj=move, after={"note": note}
        )
        _notify(move.pk)
    return move


def _notify_window(window_id: int) -> None:
    enqueue_on_commit(
        lambda: task_named("compute.notify_window_closed").delay(window_id, 0),
        what="the window e-mails",
        critical=False,
    )


def _notify(move_id: int) -> None:
    enqueue_on_commit(
        lambda: task_named("compute.notify_node_move").delay(move_id),
        what="the node-move e-mail",
        critical=False,
    )
