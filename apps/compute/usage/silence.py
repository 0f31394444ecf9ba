"""A RUNNING node that stops sending samples: its activity is "unknown", never idle or busy.

The node agent posts every 5 minutes; a node the cloud says is RUNNING and that has sent
nothing for `usage_rules.SILENT_AFTER` (30 minutes) — the agent removed, the node hung, the
network cut — opens a silence spell (one open spell per node, a database constraint), and its
group and staff are e-mailed once per spell. A sample, or the node leaving RUNNING, ends it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, OuterRef, QuerySet, Subquery
from django.utils import timezone

from apps.compute.models import Allocation, ComputePolicy, GpuSample, Node
from apps.compute.recipients import member_emails, staff_emails
from apps.compute.usage import rules as usage_rules
from apps.compute.usage_models import NodeSilence
from apps.core.models import Course
from apps.core.timefmt import format_instant


def with_last_sample(nodes: QuerySet[Node]) -> QuerySet[Node]:
    """The nodes with `last_sample_at` and `last_util_max` (one query)."""
    last = GpuSample.objects.filter(node=OuterRef("pk")).order_by("-at")
    return nodes.annotate(
        last_sample_at=Max("gpu_samples__at"),
        last_util_max=Subquery(last.values("util_max")[:1]),
    )


def activity_of(node: Any, idle_below: float, now: dt.datetime) -> str:
    """`usage_rules.activity` of a node from `with_last_sample`."""
    return usage_rules.activity(
        cloud_status=node.cloud_status,
        running_since=node.cloud_status_at,
        last_sample_at=getattr(node, "last_sample_at", None),
        last_util_max=getattr(node, "last_util_max", None),
        idle_below=idle_below,
        now=now,
    )


def idle_below(course: Course) -> float:
    value = (
        ComputePolicy.objects.filter(course=course).values_list("idle_below_pct", flat=True).first()
    )
    return float(value if value is not None else 5)


def silence_check(course: Course, now: dt.datetime | None = None) -> list[str]:
    """Open a spell (and e-mail the group and staff, once) for each RUNNING node silent for 30
    minutes; end the spells of nodes heard from again or no longer running. Returns the nodes
    newly reported."""
    from apps.core import outbox

    now = now or timezone.now()
    silent: dict[int, tuple[Node, dt.datetime]] = {}
    for node in with_last_sample(Node.objects.filter(course=course)):
        since = usage_rules.silent_since(
            cloud_status=node.cloud_status,
            running_since=node.cloud_status_at,
            last_sample_at=node.last_sample_at,  # type: ignore[attr-defined]
            now=now,
        )
        if since is not None:
            silent[node.pk] = (node, since)
    NodeSilence.objects.filter(node__course=course, ended_at__isnull=True).exclude(
        node_id__in=list(silent)
    ).update(ended_at=now)
    holders = dict(
        Allocation.objects.filter(node_id__in=list(silent), ended_at__isnull=True).values_list(
            "node_id", "group_id"
        )
    )
    told_before = set(
        NodeSilence.objects.filter(node_id__in=list(silent), ended_at__isnull=True).values_list(
            "node_id", flat=True
        )
    )
    told = []
    for node_id, (node, since) in sorted(silent.items(), key=lambda kv: kv[1][0].name):
        if node_id in told_before:
            continue
        try:
            with transaction.atomic():
                spell = NodeSilence.objects.create(node=node, since=since, noticed_at=now)
                group_id = holders.get(node_id)
                heard = format_instant(since, course.timezone)
                outbox.post(
                    "compute.node_silent",
                    [
                        outbox.Mail(
                            staff_emails(course.pk) + (member_emails(group_id) if group_id else []),
                            f"[{course.code}] {node.name}: running, activity unknown",
                            f"The cloud says {node.name} is running, but courseops has heard "
                            f"nothing from its agent since {heard}, so whether its GPUs are busy "
                            "or idle is unknown (it still costs money while it runs).\n\n"
                            "If nothing is meant to run, stop it. If something is, check that "
                            "the node responds and that the agent still runs from cron.\n"
                            f"{settings.SITE_URL}/c/{course.code}/node/\n",
                        )
                    ],
                    course_id=course.pk,
                    run=f"silent-{node.pk}-{spell.pk}",
                )
        except IntegrityError:
            continue  # a spell is open already: told before
        told.append(node.name)
    return told
