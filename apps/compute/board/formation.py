"""Allocation at the group-formation deadline (the syllabus: "Jan 29: groups of 4–6; node
assigned").

A beat task looks every few minutes for courses whose formation deadline (a milestone named in
the course file, course time) has passed and whose formation allocation has not run; it gives
every group of at least the minimum size a node and an IP (as far as they go), leaves the groups
under the minimum to staff, e-mails each allocated group its node, IP and SSH line and the staff
the groups left over. `ComputePolicy.formation_run_at` is set in the same transaction, so a
second run (or a second worker) changes nothing. Staff can run it early from the compute board.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.compute.board.services import (
    _create,
    _free_ips,
    _free_nodes,
    _lock_inventory,
    _unallocated_groups,
    groups_under_minimum,
    require_staff,
)
from apps.compute.models import Allocation, ComputePolicy
from apps.core.errors import Conflict
from apps.core.models import Course, User
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.timefmt import format_instant


@dataclass
class FormationResult:
    ran: bool  # False: it had already run, is off, or the deadline has not passed
    allocated: list[Allocation] = field(default_factory=list)
    under_minimum: list[str] = field(default_factory=list)  # "name (n members)"
    without_node: list[str] = field(default_factory=list)  # eligible, but nothing was free
    reason: str = ""


def formation_deadline(course: Course) -> dt.datetime | None:
    policy = ComputePolicy.objects.filter(course=course).first()
    key = policy.formation_milestone if policy else "group-formation"
    return Milestone.objects.filter(course=course, key=key).values_list("due_at", flat=True).first()


def allocate_at_formation(
    *, course: Course, actor: User | None = None, now: dt.datetime | None = None
) -> FormationResult:
    """Run the formation allocation for `course` once. Without `actor` (the beat task) it runs
    only when the course file turns it on and the deadline has passed; staff (`actor`) may run
    it early or when it is off. Groups are served by name, each its first free node with an IP
    in the node's region; a shortage leaves the rest named, never a half-made allocation."""
    now = now or timezone.now()
    if actor is not None:
        require_staff(actor, course)
    with transaction.atomic():
        policy, _ = ComputePolicy.objects.get_or_create(course=course)
        policy = ComputePolicy.objects.select_for_update().get(pk=policy.pk)
        if policy.formation_run_at is not None:
            when = format_instant(policy.formation_run_at, course.timezone)
            return FormationResult(ran=False, reason=f"It already ran on {when}.")
        if actor is None:
            due = formation_deadline(course)
            if not policy.allocate_at_formation:
                return FormationResult(ran=False, reason="Turned off in the course file.")
            if due is None or due > now:
                return FormationResult(ran=False, reason="The formation deadline has not passed.")
        _lock_inventory(course)
        short = groups_under_minimum(course)
        short_ids = {g.pk for g, _ in short}
        groups = [g for g in _unallocated_groups(course) if g.pk not in short_ids]
        nodes, ips = _free_nodes(course), _free_ips(course)
        result = FormationResult(
            ran=True,
            under_minimum=[f"{g.name} ({n} member{'s' if n != 1 else ''})" for g, n in short],
        )
        for group in groups:
            node = next((n for n in nodes if any(i.region == n.region for i in ips)), None)
            if node is None:
                result.without_node.append(group.name)
                continue
            ip = next(i for i in ips if i.region == node.region)
            nodes.remove(node)
            ips.remove(ip)
            try:
                result.allocated.append(_create(course, group, node, ip))
            except Conflict:
                result.without_node.append(group.name)
        policy.formation_run_at = now
        policy.save(update_fields=["formation_run_at"])
        audit_record(
            actor=actor,
            action="allocation.formation",
            course=course,
            obj=course,
            after={
                "allocated": {
                    a.group.name: [a.node.name, a.static_ip.address] for a in result.allocated
                },
                "under_minimum": result.under_minimum,
                "without_node": result.without_node,
                "early": actor is not None,
            },
        )
        ids = [a.pk for a in result.allocated]
        leftover = result.under_minimum + [f"{g} (no free node)" for g in result.without_node]
        enqueue_on_commit(
            lambda: task_named("compute.notify_formation").delay(course.pk, ids, leftover),
            what="the formation e-mails",
            critical=False,
        )
    return result


def due_courses(now: dt.datetime) -> list[Course]:
    """Courses with nodes whose formation allocation is on (the default when the course file
    says nothing), has not run, and whose deadline has passed."""
    candidates = (
        Course.objects.filter(nodes__isnull=False)
        .exclude(compute_policy__formation_run_at__isnull=False)
        .exclude(compute_policy__allocate_at_formation=False)
        .distinct()
        .order_by("pk")
    )
    return [c for c in candidates if (due := formation_deadline(c)) is not None and due <= now]
