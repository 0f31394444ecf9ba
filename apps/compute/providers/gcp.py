"""The course's GCP project through the maintained client library (`google-cloud-compute`, REST
transport). Credentials come from the environment (Application Default Credentials: a service
account key named by GOOGLE_APPLICATION_CREDENTIALS, or the metadata server), never from the
database. `COMPUTE_ENDPOINT` points the same client at another Compute Engine endpoint — the
tests' local peer — with anonymous credentials.

The client's own retries are turned off (`retry=None`): a failed call becomes a job that is
retried with backoff, where staff can see it, instead of a request that hangs for minutes.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from apps.compute.providers.base import (
    Address,
    CloudError,
    FingerprintConflict,
    Instance,
    Rule,
)

T = TypeVar("T")


def _last(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


def _translate(exc: BaseException) -> CloudError:
    """The library's exception → a CloudError that says whether a retry may help."""
    import requests
    from google.api_core import exceptions as gx

    if isinstance(exc, gx.PreconditionFailed):
        return FingerprintConflict()
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    # A failed operation's own errors say why (QUOTA_EXCEEDED: Quota 'CPUS' exceeded …).
    details = [
        f"{getattr(e, 'code', '')}: {getattr(e, 'message', '')}".strip(": ")
        for e in (getattr(exc, "errors", None) or [])
        if getattr(e, "message", None)
    ]
    if details:
        message = f"{message} — {'; '.join(details)}"
    code = getattr(exc, "code", None)
    code = code if isinstance(code, int) else None
    if isinstance(exc, gx.TooManyRequests | gx.ServerError | gx.DeadlineExceeded | gx.RetryError):
        return CloudError(f"{code or ''} {message}".strip(), retryable=True, code=code)
    if isinstance(exc, concurrent.futures.TimeoutError | requests.Timeout | TimeoutError):
        return CloudError("the cloud did not answer in time", retryable=True)
    if isinstance(exc, requests.ConnectionError | ConnectionError):
        return CloudError(f"could not reach the cloud: {message}", retryable=True)
    if isinstance(exc, gx.BadRequest) and "in use" in message.lower():
        # An address still attached to the node that held it before: its own job frees it.
        return CloudError(message, retryable=True, code=code)
    return CloudError(f"{code or ''} {message}".strip(), retryable=False, code=code)


class Gcp:
    name = "gcp"

    def __init__(self, project: str) -> None:
        from google.api_core.client_options import ClientOptions
        from google.cloud import compute_v1

        self.project = project
        self.timeout = float(settings.COMPUTE_CALL_TIMEOUT_S)
        self.network = settings.COMPUTE_NETWORK
        kwargs: dict[str, Any] = {"transport": "rest"}
        if settings.COMPUTE_ENDPOINT:
            from google.auth.credentials import AnonymousCredentials

            kwargs["client_options"] = ClientOptions(api_endpoint=settings.COMPUTE_ENDPOINT)
            kwargs["credentials"] = AnonymousCredentials()
        self.v1 = compute_v1
        self.instances_client = compute_v1.InstancesClient(**kwargs)
        self.addresses_client = compute_v1.AddressesClient(**kwargs)
        self.firewalls_client = compute_v1.FirewallsClient(**kwargs)

    # -- helpers ---------------------------------------------------------------------------
    def _call(self, fn: Callable[..., T], **kw: Any) -> T:
        try:
            return fn(retry=None, timeout=self.timeout, **kw)
        except Exception as exc:
            raise _translate(exc) from exc

    def _wait(self, fn: Callable[..., Any], **kw: Any) -> None:
        """Start an operation and wait until the cloud says it is done (or failed)."""
        from google.api_core import retry as gretry

        op = self._call(fn, **kw)
        polling = gretry.Retry(initial=0.2, maximum=2.0, multiplier=1.5, timeout=self.timeout)
        try:
            op.result(timeout=self.timeout, polling=polling)
        except Exception as exc:
            raise _translate(exc) from exc

    def _instance(self, raw: Any) -> Instance:
        nic = raw.network_interfaces[0] if raw.network_interfaces else None
        ac = nic.access_configs[0] if nic is not None and nic.access_configs else None
        acc = raw.guest_accelerators[0] if raw.guest_accelerators else None
        items = {i.key: i.value for i in raw.metadata.items} if raw.metadata else {}
        return Instance(
            name=raw.name,
            zone=_last(raw.zone),
            machine_type=_last(raw.machine_type),
            status=raw.status,
            internal_ip=nic.network_i_p if nic is not None else "",
            external_ip=(ac.nat_i_p or None) if ac is not None else None,
            access_config=ac.name if ac is not None else None,
            gpu_model=_last(acc.accelerator_type) if acc is not None else "",
            gpu_count=int(acc.accelerator_count) if acc is not None else 0,
            fingerprint=raw.metadata.fingerprint if raw.metadata else "",
            ssh_keys=items.get("ssh-keys", ""),
            labels=dict(raw.labels),
            metadata={k: v for k, v in items.items() if k != "ssh-keys"},
        )

    # -- reads -----------------------------------------------------------------------------
    def instances(self) -> list[Instance]:
        pager = self._call(self.instances_client.aggregated_list, project=self.project)
        try:
            return [self._instance(i) for _, scoped in pager for i in scoped.instances]
        except Exception as exc:
            raise _translate(exc) from exc

    def instance(self, zone: str, name: str) -> Instance:
        raw = self._call(self.instances_client.get, project=self.project, zone=zone, instance=name)
        return self._instance(raw)

    def addresses(self) -> list[Address]:
        pager = self._call(self.addresses_client.aggregated_list, project=self.project)
        try:
            return [
                Address(
                    name=a.name,
                    region=_last(a.region),
                    address=a.address,
                    status=a.status,
                    user=_last(a.users[0]) if a.users else "",
                )
                for _, scoped in pager
                for a in scoped.addresses
            ]
        except Exception as exc:
            raise _translate(exc) from exc

    def rules(self) -> list[Rule]:
        pager = self._call(self.firewalls_client.list, project=self.project)
        try:
            return [
                Rule(
                    name=f.name,
                    source_ranges=tuple(f.source_ranges),
                    ports=tuple(p for a in f.allowed for p in a.ports),
                    description=f.description,
                )
                for f in pager
            ]
        except Exception as exc:
            raise _translate(exc) from exc

    # -- changes ---------------------------------------------------------------------------
    def set_ssh_keys(self, inst: Instance, value: str) -> None:
        items = [self.v1.Items(key=k, value=v) for k, v in inst.metadata.items()]
        if value:
            items.append(self.v1.Items(key="ssh-keys", value=value))
        self._wait(
            self.instances_client.set_metadata,
            project=self.project,
            zone=inst.zone,
            instance=inst.name,
            metadata_resource=self.v1.Metadata(fingerprint=inst.fingerprint, items=items),
        )

    def attach_address(self, zone: str, name: str, address: str) -> None:
        self._wait(
            self.instances_client.add_access_config,
            project=self.project,
            zone=zone,
            instance=name,
            network_interface="nic0",
            access_config_resource=self.v1.AccessConfig(
                name="External NAT", nat_i_p=address, type_="ONE_TO_ONE_NAT"
            ),
        )

    def detach_address(self, zone: str, name: str, access_config: str) -> None:
        self._wait(
            self.instances_client.delete_access_config,
            project=self.project,
            zone=zone,
            instance=name,
            network_interface="nic0",
            access_config=access_config,
        )

    def insert_rule(self, rule: Rule) -> None:
        self._wait(
            self.firewalls_client.insert,
            project=self.project,
            firewall_resource=self.v1.Firewall(
                name=rule.name,
                network=f"global/networks/{self.network}",
                direction="INGRESS",
                source_ranges=list(rule.source_ranges),
                allowed=[self.v1.Allowed(I_p_protocol="tcp", ports=list(rule.ports))],
                description=rule.description,
            ),
        )

    def delete_rule(self, name: str) -> None:
        self._wait(self.firewalls_client.delete, project=self.project, firewall=name)

    def start(self, zone: str, name: str) -> None:
        self._wait(self.instances_client.start, project=self.project, zone=zone, instance=name)

    def stop(self, zone: str, name: str) -> None:
        self._wait(self.instances_client.stop, project=self.project, zone=zone, instance=name)
