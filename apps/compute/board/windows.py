"""Writes for sharing windows: request, approve, decline, cancel.

A window is approved once every other owning group (any member) approved its node, or staff
approve it whole. Approval activates the window's node rows; overlapping approved windows on a
node are refused by the service (every backend) and by the PostgreSQL exclusion constraint
(concurrent approvals), and the Conflict names the window already holding the node.
"""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.compute.board import rules
from apps.compute.models import Allocation, SharingWindow, WindowNode
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.groups.models import GroupMembership


def _group_of(user: User, course: Course) -> int | None:
    return (
        GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True)
        .values_list("group_id", flat=True)
        .first()
    )


def _describe(wn: WindowNode, tz: str) -> str:
    w = wn.window
    return (
        f"{wn.node.name} is already shared in window #{w.pk} of {w.requester.name} "
        f"({format_instant(w.starts_at, tz)} – {format_instant(w.ends_at, tz)})"
    )


def _conflict_for(window: SharingWindow) -> WindowNode | None:
    return (
        WindowNode.objects.filter(
            node_id__in=window.nodes.values("node_id"),
            active=True,
            starts_at__lt=window.ends_at,
            ends_at__gt=window.starts_at,
        )
        .exclude(window=window)
        .select_related("window__requester", "node")
        .first()
    )


def window_request(
    *,
    actor: User,
    course: Course,
    node_ids: list[int],
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    purpose: str = "",
    master_port: int = 29500,
) -> SharingWindow:
    """A student asks to use other groups' nodes with their own group's node for [start, end)."""
    if not is_student(actor, course):
        raise NotAllowed("Sharing windows are requested by a student for their group.")
    problems = rules.window_problems(
        start=starts_at, end=ends_at, now=timezone.now(), max_hours=course.sharing_window_max_hours
    )
    if problems:
        raise DomainError(
            " ".join(problems), field="ends_at" if "hours" in problems[-1] else "starts_at"
        )
    if not 1024 <= master_port <= 65535:
        raise DomainError(
            "The rendezvous port must be between 1024 and 65535.", field="master_port"
        )
    group_id = _group_of(actor, course)
    if group_id is None:
        raise DomainError("You are not in a group.")
    with transaction.atomic():
        live = Allocation.objects.filter(course=course, ended_at__isnull=True).select_related(
            "node", "group"
        )
        own = next((a for a in live if a.group_id == group_id), None)
        if own is None:
            raise DomainError("Your group holds no node yet; ask the course staff.")
        wanted = [a for a in live if a.node_id in set(node_ids) and a.group_id != group_id]
        if not wanted:
            raise DomainError("Choose at least one other group's node.", field="node_ids")
        missing = set(node_ids) - {a.node_id for a in wanted}
        if missing - {own.node_id}:
            raise DomainError(
                "Some chosen nodes are not held by another group of this course.", field="node_ids"
            )
        window = SharingWindow.objects.create(
            course=course,
            requester_id=group_id,
            starts_at=starts_at,
            ends_at=ends_at,
            purpose=purpose[:300],
            master_port=master_port,
            created_by=actor,
        )
        now = timezone.now()
        WindowNode.objects.create(
            window=window,
            node=own.node,
            owner_id=group_id,
            rank=0,
            approved_at=now,
            approved_by=actor,
            starts_at=starts_at,
            ends_at=ends_at,
        )
        for rank, a in enumerate(sorted(wanted, key=lambda a: a.node.name), start=1):
            WindowNode.objects.create(
                window=window,
                node=a.node,
                owner=a.group,
                rank=rank,
                starts_at=starts_at,
                ends_at=ends_at,
            )
        audit_record(
            actor=actor,
            action="window.requested",
            course=course,
            obj=window,
            after={
                "nodes": [own.node.name] + [a.node.name for a in wanted],
                "starts_at": starts_at.isoformat(),
                "ends_at": ends_at.isoformat(),
            },
        )
    return window


def _lock(course: Course, window_id: int) -> SharingWindow:
    window = (
        SharingWindow.objects.select_for_update()
        .filter(course=course, pk=window_id)
        .select_related("requester")
        .first()
    )
    if window is None:
        raise NotFound("No such sharing window in this course.")
    return window


def window_approve(
    *, actor: User, course: Course, window_id: int, confirm: bool = False
) -> SharingWindow:
    """An owning group's member approves their node(s); staff approve every node at once. The
    last approval activates the window unless a node is already shared at an overlapping time.
    Staff approving a node its lending group has not agreed to overrides that group's consent:
    refused until they `confirm`, and the override is audited."""
    staff = is_staff(actor, course)
    with transaction.atomic():
        window = _lock(course, window_id)
        # Who may approve comes first: a stranger learns nothing about the window's state.
        pending = window.nodes.filter(approved_at__isnull=True)
        if not staff:
            mine = _group_of(actor, course)
            if mine is None or not window.nodes.filter(owner_id=mine).exists():
                raise NotAllowed(
                    "Only a member of a group whose node is requested, or course staff, can "
                    "approve."
                )
            pending = pending.filter(owner_id=mine)
        if window.status != SharingWindow.Status.REQUESTED:
            raise Conflict(
                f"This window is {window.get_status_display().lower()}; only requested windows can "
                "be approved."
            )
        if window.starts_at <= timezone.now():
            raise Conflict("This window has already started; request a new one.")
        if not pending.exists():
            raise Conflict("Your group has already approved its node for this window.")
        overridden = sorted(
            {
                wn.owner.name
                for wn in pending.exclude(owner_id=window.requester_id).select_related("owner")
            }
        )
        if staff and overridden and not confirm:
            raise Conflict(
                f"{', '.join(overridden)} {'has' if len(overridden) == 1 else 'have'} not agreed "
                "to lend a node for this window yet. Approving now overrides that consent; "
                "confirm to approve anyway."
            )
        now = timezone.now()
        pending.update(approved_at=now, approved_by=actor)
        if not window.nodes.filter(approved_at__isnull=True).exists():
            clash = _conflict_for(window)
            if clash is not None:
                raise Conflict(_describe(clash, course.timezone))
            try:
                with transaction.atomic():
                    window.nodes.update(active=True)
            except IntegrityError:
                clash = _conflict_for(window)
                raise Conflict(
                    _describe(clash, course.timezone)
                    if clash
                    else "A node is already shared at an overlapping time."
                ) from None
            window.status = SharingWindow.Status.APPROVED
            window.decided_at, window.decided_by = now, actor
            window.save(update_fields=["status", "decided_at", "decided_by"])
        audit_record(
            actor=actor,
            action="window.approved" if window.status == "approved" else "window.node_approved",
            course=course,
            obj=window,
            after={"status": window.status, **({"overrode": overridden} if staff else {})},
        )
    return window


def window_decline(*, actor: User, course: Course, window_id: int, note: str = "") -> SharingWindow:
    if not is_staff(actor, course):
        raise NotAllowed(
            "Only the course staff decline windows; an owning group simply does not approve."
        )
    with transaction.atomic():
        window = _lock(course, window_id)
        if window.status != SharingWindow.Status.REQUESTED:
            raise Conflict("Only requested windows can be declined.")
        window.status, window.note = SharingWindow.Status.DECLINED, note[:300]
        window.decided_at, window.decided_by = timezone.now(), actor
        window.save(update_fields=["status", "note", "decided_at", "decided_by"])
        audit_record(
            actor=actor, action="window.declined", course=course, obj=window, after={"note": note}
        )
    return window


def window_cancel(*, actor: User, course: Course, window_id: int, note: str = "") -> SharingWindow:
    """The requesting group (any member) or staff cancel a window that has not ended; an
    approved window frees its nodes at once."""
    with transaction.atomic():
        window = _lock(course, window_id)
        if not is_staff(actor, course) and _group_of(actor, course) != window.requester_id:
            raise NotAllowed(
                "Only the requesting group or the course staff can cancel this window."
            )
        if window.status in {SharingWindow.Status.DECLINED, SharingWindow.Status.CANCELLED}:
            raise Conflict(f"This window is already {window.status}.")
        if window.ends_at <= timezone.now():
            raise Conflict("This window has already ended.")
        window.nodes.update(active=False)
        window.status, window.note = SharingWindow.Status.CANCELLED, note[:300]
        window.decided_at, window.decided_by = timezone.now(), actor
        window.save(update_fields=["status", "note", "decided_at", "decided_by"])
        audit_record(
            actor=actor, action="window.cancelled", course=course, obj=window, after={"note": note}
        )
    return window
