"""Inventory from the project: read the cloud's instances and static addresses, compare them
with the board, and let staff apply the plan they saw.

The plan is a list of changes (a node or an address new, gone or changed) with a digest; apply
takes the digest the page showed and refuses if the project changed since, so staff never apply
something they did not read. A node gone from the project is retired (its history stays); an
address gone is released. Instances without GPUs are left out: the board holds GPU nodes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from django.db import transaction
from django.utils import timezone

from apps.compute.cloud.providers.base import Address, Instance
from apps.compute.cloud.sync import _project, provider, record_status
from apps.compute.models import Allocation, Node, StaticIP
from apps.compute.quota_version import quota_changed
from apps.core.errors import Conflict
from apps.core.models import Course, User
from apps.core.services import audit_record


@dataclass(frozen=True)
class Change:
    what: str  # node | address
    action: str  # new | gone | changed
    name: str
    detail: str
    fields: dict[str, object]


@dataclass(frozen=True)
class Plan:
    changes: list[Change]
    instances: int
    addresses: int

    @property
    def digest(self) -> str:
        raw = json.dumps([asdict(c) for c in self.changes], sort_keys=True, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


def plan(
    course: Course,
    read: tuple[list[Instance], list[Address]] | None = None,
) -> Plan:
    """What differs between the project and the board; `read` is the project's instances and
    addresses when the caller already has them (the preflight), else they are read now."""
    if read is None:
        p = provider(course.pk)
        read = (p.instances(), p.addresses())
    instances = [i for i in read[0] if i.gpu_count > 0]
    addresses = read[1]
    nodes = {n.name: n for n in Node.objects.filter(course=course)}
    ips = {s.address: s for s in StaticIP.objects.filter(course=course)}
    changes: list[Change] = []
    for i in sorted(instances, key=lambda i: i.name):
        fields = {
            "zone": i.zone,
            "machine_type": i.machine_type,
            "gpu_count": i.gpu_count,
            "internal_ip": i.internal_ip,
        }
        n = nodes.get(i.name)
        if n is None:
            changes.append(
                Change(
                    "node",
                    "new",
                    i.name,
                    f"{i.machine_type}, {i.gpu_count} GPUs ({i.gpu_model}), {i.zone}, "
                    f"{i.internal_ip}, {i.status}",
                    fields | {"gpu_model": i.gpu_model},
                )
            )
            continue
        differs = {k: v for k, v in fields.items() if str(getattr(n, k)) != str(v)}
        if differs:
            changes.append(
                Change(
                    "node",
                    "changed",
                    i.name,
                    ", ".join(f"{k}: {getattr(n, k)} → {v}" for k, v in differs.items()),
                    differs,
                )
            )
    seen = {i.name for i in instances}
    for name, n in sorted(nodes.items()):
        if name not in seen and n.status != Node.Status.RETIRED:
            changes.append(Change("node", "gone", name, "not in the project: retire it", {}))
    for a in sorted(addresses, key=lambda a: a.address):
        s = ips.get(a.address)
        if s is None:
            changes.append(
                Change(
                    "address",
                    "new",
                    a.address,
                    f"{a.name}, {a.region}, {a.status}",
                    {"resource_name": a.name, "region": a.region},
                )
            )
        elif s.region != a.region or s.resource_name != a.name:
            changes.append(
                Change(
                    "address",
                    "changed",
                    a.address,
                    f"{s.resource_name} ({s.region}) → {a.name} ({a.region})",
                    {"resource_name": a.name, "region": a.region},
                )
            )
    found = {a.address for a in addresses}
    for address, s in sorted(ips.items()):
        if address not in found and s.status != StaticIP.Status.RELEASED:
            changes.append(Change("address", "gone", address, "no longer reserved: release it", {}))
    return Plan(changes, len(instances), len(addresses))


def apply(*, actor: User, course: Course, digest: str) -> Plan:
    """Apply the plan whose digest staff saw; refused when the project changed since."""
    from apps.compute.board.services import require_staff

    require_staff(actor, course)
    current = plan(course)
    if current.digest != digest:
        raise Conflict(
            "The project changed since you looked: the plan below is the new one; read it and "
            "apply again."
        )
    project = _project(course.pk)
    with transaction.atomic():
        for c in current.changes:
            if c.what == "node" and c.action == "new":
                node = Node.objects.create(
                    course=course, name=c.name, gcp_project=project, **c.fields
                )
            elif c.what == "node" and c.action == "changed":
                Node.objects.filter(course=course, name=c.name).update(**c.fields)
                quota_changed(course.pk)  # (a bulk update sends no signal; GPU counts count)
            elif c.what == "node" and c.action == "gone":
                node = Node.objects.get(course=course, name=c.name)
                held = Allocation.objects.filter(node=node, ended_at__isnull=True).first()
                if held is not None:
                    raise Conflict(
                        f"{c.name} is gone from the project but {held.group} still holds it: "
                        "move the group to another node first."
                    )
                node.status = Node.Status.RETIRED
                node.save(update_fields=["status"])
                record_status(node, "GONE")
            elif c.what == "address" and c.action == "new":
                StaticIP.objects.create(course=course, address=c.name, **c.fields)
            elif c.what == "address" and c.action == "changed":
                StaticIP.objects.filter(course=course, address=c.name).update(**c.fields)
            elif c.what == "address" and c.action == "gone":
                ip = StaticIP.objects.get(course=course, address=c.name)
                if Allocation.objects.filter(static_ip=ip, ended_at__isnull=True).exists():
                    raise Conflict(
                        f"{c.name} is no longer reserved but a group still holds it: reserve it "
                        "again in the project or release the group's allocation first."
                    )
                ip.status = StaticIP.Status.RELEASED
                ip.save(update_fields=["status"])
        audit_record(
            actor=actor,
            action="cloud.inventory_applied",
            course=course,
            obj=course,
            after={
                "changes": [f"{c.what} {c.action} {c.name}" for c in current.changes],
                "at": timezone.now().isoformat(),
            },
        )
    return current
