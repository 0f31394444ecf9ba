"""The default provider: no cloud account, no network. It keeps a stand-in project (instances,
addresses, firewall rules) in the database, seeded from the board the first time it is asked,
and changes it as Compute Engine would — so `make run` and the tests without the peer see the
same plans, jobs and call logs a live project gives, and nothing is ever sent anywhere."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import transaction

from apps.compute.cloud.providers.base import (
    Address,
    CloudError,
    FingerprintConflict,
    Instance,
    Rule,
)
from apps.compute.localssd import bundled_gb

T = TypeVar("T")


def _fingerprint(keys: str, seq: int) -> str:
    return hashlib.sha256(f"{seq}:{keys}".encode()).hexdigest()[:16]


def seed(course_id: int) -> dict[str, Any]:
    """A project as the board describes it: every node running, no keys, no address on it."""
    from apps.compute.models import Node, StaticIP

    instances: dict[str, dict[str, Any]] = {
        n.name: {
            "zone": n.zone,
            "machine_type": n.machine_type,
            "status": "TERMINATED" if n.status == Node.Status.RETIRED else "RUNNING",
            "internal_ip": n.internal_ip,
            "external_ip": None,
            "access_config": None,
            "gpu_model": n.gpu_model,
            "gpu_count": n.gpu_count,
            "fingerprint": _fingerprint("", 0),
            "ssh_keys": "",
            "labels": {},
        }
        for n in Node.objects.filter(course_id=course_id)
    }
    addresses = {
        ip.resource_name: {
            "region": ip.region,
            "address": ip.address,
            "status": "RESERVED",
            "user": "",
        }
        for ip in StaticIP.objects.filter(course_id=course_id)
    }
    return {"instances": instances, "addresses": addresses, "rules": {}, "seq": 0}


class DryRun:
    name = "dry-run"

    def __init__(self, course_id: int) -> None:
        self.course_id = course_id

    def _with(self, change: Callable[[dict[str, Any]], T], *, write: bool) -> T:
        from apps.compute.models import DryRunProject

        with transaction.atomic():
            row, _ = DryRunProject.objects.get_or_create(course_id=self.course_id)
            row = DryRunProject.objects.select_for_update().get(pk=row.pk)
            if not row.state:
                row.state = seed(self.course_id)
                write = True
            out = change(row.state)
            if write:
                row.state["seq"] = row.state.get("seq", 0) + 1
                row.save(update_fields=["state", "updated_at"])
            return out

    @staticmethod
    def _inst(name: str, d: dict[str, Any]) -> Instance:
        return Instance(
            name=name,
            zone=d["zone"],
            machine_type=d["machine_type"],
            status=d["status"],
            internal_ip=d["internal_ip"],
            external_ip=d["external_ip"],
            access_config=d["access_config"],
            gpu_model=d["gpu_model"],
            gpu_count=d["gpu_count"],
            fingerprint=d["fingerprint"],
            ssh_keys=d["ssh_keys"],
            labels=dict(d["labels"]),
            tags=tuple(d.get("tags", [])),
            tags_fingerprint=d.get("tags_fingerprint", ""),
            local_ssd_gb=bundled_gb(d["machine_type"]),
        )

    @staticmethod
    def _get(state: dict[str, Any], zone: str, name: str) -> dict[str, Any]:
        d = state["instances"].get(name)
        if d is None or d["zone"] != zone:
            raise CloudError(f"404 instance {zone}/{name} not found", retryable=False, code=404)
        return dict(d)

    def instances(self) -> list[Instance]:
        return self._with(
            lambda s: [self._inst(n, d) for n, d in sorted(s["instances"].items())], write=False
        )

    def instance(self, zone: str, name: str) -> Instance:
        return self._with(lambda s: self._inst(name, self._get(s, zone, name)), write=False)

    def addresses(self) -> list[Address]:
        return self._with(
            lambda s: [
                Address(
                    name=n,
                    region=d["region"],
                    address=d["address"],
                    status=d["status"],
                    user=d["user"],
                )
                for n, d in sorted(s["addresses"].items())
            ],
            write=False,
        )

    def rules(self) -> list[Rule]:
        return self._with(
            lambda s: [
                Rule(
                    name=n,
                    source_ranges=tuple(d["source_ranges"]),
                    ports=tuple(d["ports"]),
                    description=d["description"],
                    target_tags=tuple(d.get("target_tags", [])),
                )
                for n, d in sorted(s["rules"].items())
            ],
            write=False,
        )

    def set_ssh_keys(self, inst: Instance, value: str) -> None:
        def change(s: dict[str, Any]) -> None:
            d = self._get(s, inst.zone, inst.name)
            if d["fingerprint"] != inst.fingerprint:
                raise FingerprintConflict()
            d["ssh_keys"] = value
            d["fingerprint"] = _fingerprint(value, s.get("seq", 0) + 1)
            s["instances"][inst.name] = d

        self._with(change, write=True)

    def set_tags(self, inst: Instance, tags: list[str]) -> None:
        def change(s: dict[str, Any]) -> None:
            d = self._get(s, inst.zone, inst.name)
            if d.get("tags_fingerprint", "") != inst.tags_fingerprint:
                raise FingerprintConflict("the tags changed since they were read (412)")
            d["tags"] = list(tags)
            d["tags_fingerprint"] = _fingerprint(",".join(tags), s.get("seq", 0) + 1)
            s["instances"][inst.name] = d

        self._with(change, write=True)

    def login_members(self, zone: str, name: str) -> set[str]:
        return set()  # the stand-in project has no OS Login

    def set_login_members(self, zone: str, name: str, emails: set[str]) -> None:
        return None

    def attach_address(self, zone: str, name: str, address: str) -> None:
        def change(s: dict[str, Any]) -> None:
            d = self._get(s, zone, name)
            found = next(
                ((n, a) for n, a in s["addresses"].items() if a["address"] == address), None
            )
            if found is None:
                raise CloudError(f"404 address {address} is not reserved", retryable=False)
            aname, a = found
            if a["status"] == "IN_USE" and a["user"] != name:
                raise CloudError(
                    f"400 address {address} is in use by {a['user']}", retryable=True, code=400
                )
            if d["access_config"]:
                raise CloudError("400 nic0 already has an access config", retryable=False)
            d["access_config"], d["external_ip"] = "External NAT", address
            s["instances"][name] = d
            s["addresses"][aname] = {**a, "status": "IN_USE", "user": name}

        self._with(change, write=True)

    def detach_address(self, zone: str, name: str, access_config: str) -> None:
        def change(s: dict[str, Any]) -> None:
            d = self._get(s, zone, name)
            for aname, a in s["addresses"].items():
                if a["user"] == name:
                    s["addresses"][aname] = {**a, "status": "RESERVED", "user": ""}
            d["access_config"], d["external_ip"] = None, None
            s["instances"][name] = d

        self._with(change, write=True)

    def insert_rule(self, rule: Rule) -> None:
        def change(s: dict[str, Any]) -> None:
            if rule.name in s["rules"]:
                raise CloudError(f"409 rule {rule.name} already exists", retryable=False, code=409)
            s["rules"][rule.name] = {
                "source_ranges": list(rule.source_ranges),
                "ports": list(rule.ports),
                "description": rule.description,
                "target_tags": list(rule.target_tags),
            }

        self._with(change, write=True)

    def delete_rule(self, name: str) -> None:
        self._with(lambda s: s["rules"].pop(name, None), write=True)

    def _power(self, zone: str, name: str, status: str) -> None:
        def change(s: dict[str, Any]) -> None:
            d = self._get(s, zone, name)
            d["status"] = status
            s["instances"][name] = d

        self._with(change, write=True)

    def start(self, zone: str, name: str) -> None:
        self._power(zone, name, "RUNNING")

    def stop(self, zone: str, name: str, *, discard_local_ssd: bool) -> None:
        self._power(zone, name, "TERMINATED")
