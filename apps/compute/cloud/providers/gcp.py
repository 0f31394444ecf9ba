"""The course's GCP project through the maintained client library (`google-cloud-compute`, REST
transport). Credentials come from the environment (Application Default Credentials: a service
account key named by GOOGLE_APPLICATION_CREDENTIALS, or the metadata server), never from the
database. `COMPUTE_ENDPOINT` points the same client at another Compute Engine endpoint — the
tests' local peer — with anonymous credentials.

The client's own retries are turned off (`retry=None`): a failed call becomes a job that is
retried with backoff, where staff can see it, instead of a request that hangs for minutes. A
rate quota (403 `rateLimitExceeded`, or 429) is such a retry, waiting at least a minute as
Compute Engine asks (https://cloud.google.com/compute/api-quota); every other 403 is final.

Lists ask for `COMPUTE_PAGE_SIZE` results a page and follow `nextPageToken` (the client's
pager). Stops always say what happens to Local SSD data (`discardLocalSsd`), which Compute
Engine requires of an instance with Local SSDs (https://cloud.google.com/compute/docs/disks/
local-ssd#stop_instance). OS Login is read from instance metadata, else project metadata
(`enable-oslogin`; https://cloud.google.com/compute/docs/oslogin/set-up-oslogin).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from apps.compute.cloud.providers.base import (
    OS_LOGIN_ROLE,
    Address,
    CloudError,
    FingerprintConflict,
    Instance,
    Rule,
)

T = TypeVar("T")


def _last(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


RATE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


def _reasons(exc: BaseException) -> set[str]:
    """The `errors[].reason` values of an API error (and its ErrorInfo reason, if any)."""
    out = {
        str(e.get("reason", ""))
        for e in (getattr(exc, "errors", None) or [])
        if isinstance(e, dict)
    }
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason:
        out.add(reason)
    return out


def _truthy(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() in ("true", "1", "yes", "y")


def _translate(exc: BaseException) -> CloudError:
    """The library's exception → a CloudError that says whether a retry may help."""
    import requests
    from google.api_core import exceptions as gx

    if isinstance(exc, gx.PreconditionFailed) and "fingerprint" in str(exc).lower():
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
    if isinstance(exc, gx.TooManyRequests) or (
        isinstance(exc, gx.Forbidden) and _reasons(exc) & RATE_LIMIT_REASONS
    ):
        wait = float(settings.COMPUTE_RATE_LIMIT_WAIT_S)
        return CloudError(
            f"{code or ''} rate limit: {message}".strip(), retryable=True, code=code, wait_s=wait
        )
    if isinstance(exc, gx.Conflict) and "concurrent policy changes" in message:
        # An IAM read-modify-write raced another writer: read again and retry.
        return CloudError(f"{code} {message}", retryable=True, code=code)
    if isinstance(exc, gx.ServerError | gx.DeadlineExceeded | gx.RetryError):
        return CloudError(f"{code or ''} {message}".strip(), retryable=True, code=code)
    if isinstance(exc, concurrent.futures.TimeoutError | requests.Timeout | TimeoutError):
        return CloudError("the cloud did not answer in time", retryable=True)
    if isinstance(exc, requests.ConnectionError | ConnectionError):
        return CloudError(f"could not reach the cloud: {message}", retryable=True)
    if isinstance(exc, gx.BadRequest) and "in use" in message.lower():
        # An address still attached to the node that held it before: its own job frees it.
        return CloudError(message, retryable=True, code=code)
    return CloudError(f"{code or ''} {message}".strip(), retryable=False, code=code)


def point_operations_at_endpoint(clients: list[Any], kwargs: dict[str, Any]) -> None:
    """The client polls an operation through an operations client it builds itself with the
    default endpoint (compute.googleapis.com), not the one it was given: with another endpoint
    (the tests' peer) every wait would leave for the internet and end as "could not reach the
    cloud". Give each client's transport operations clients built like the client itself."""
    from google.cloud import compute_v1

    for client in clients:
        services = client._transport._extended_operations_services
        services["zone_operations"] = compute_v1.ZoneOperationsClient(**kwargs)
        services["global_operations"] = compute_v1.GlobalOperationsClient(**kwargs)
        services["region_operations"] = compute_v1.RegionOperationsClient(**kwargs)


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
        self.projects_client = compute_v1.ProjectsClient(**kwargs)
        if settings.COMPUTE_ENDPOINT:
            point_operations_at_endpoint(
                [self.instances_client, self.addresses_client, self.firewalls_client], kwargs
            )
        self.page_size = int(settings.COMPUTE_PAGE_SIZE)
        self._project_os_login: bool | None = None

    # -- helpers ---------------------------------------------------------------------------
    def _call(self, fn: Callable[..., T], **kw: Any) -> T:
        try:
            return fn(retry=None, timeout=self.timeout, **kw)
        except Exception as exc:
            raise _translate(exc) from exc

    def _wait(self, fn: Callable[..., Any], **kw: Any) -> None:
        """Start an operation and wait until the cloud says it is done (or failed)."""
        from google.api_core.future import polling as gpolling

        op = self._call(fn, **kw)
        # The library's polling retry (its predicate is "not complete yet"); a plain Retry would
        # give up on the first poll of an operation still RUNNING — a start or stop takes time.
        polling = gpolling.DEFAULT_POLLING.with_delay(
            initial=0.2, maximum=2.0, multiplier=1.5
        ).with_timeout(self.timeout)
        try:
            op.result(timeout=self.timeout, polling=polling)
        except Exception as exc:
            raise _translate(exc) from exc

    def project_os_login(self) -> bool:
        """`enable-oslogin` in the project's metadata (read once per provider, i.e. per job)."""
        if self._project_os_login is None:
            raw = self._call(self.projects_client.get, project=self.project)
            items = raw.common_instance_metadata.items if raw.common_instance_metadata else []
            value = next((i.value for i in items if i.key == "enable-oslogin"), None)
            self._project_os_login = bool(_truthy(value))
        return self._project_os_login

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
            tags=tuple(raw.tags.items) if raw.tags else (),
            tags_fingerprint=raw.tags.fingerprint if raw.tags else "",
            local_ssd_gb=sum(int(d.disk_size_gb or 375) for d in raw.disks if d.type_ == "SCRATCH"),
            os_login=(
                own
                if (own := _truthy(items.get("enable-oslogin"))) is not None
                else self.project_os_login()
            ),
        )

    # -- reads -----------------------------------------------------------------------------
    def instances(self) -> list[Instance]:
        pager = self._call(
            self.instances_client.aggregated_list,
            request=self.v1.AggregatedListInstancesRequest(
                project=self.project, max_results=self.page_size
            ),
        )
        try:
            return [self._instance(i) for _, scoped in pager for i in scoped.instances]
        except Exception as exc:
            raise _translate(exc) from exc

    def instance(self, zone: str, name: str) -> Instance:
        raw = self._call(self.instances_client.get, project=self.project, zone=zone, instance=name)
        return self._instance(raw)

    def addresses(self) -> list[Address]:
        pager = self._call(
            self.addresses_client.aggregated_list,
            request=self.v1.AggregatedListAddressesRequest(
                project=self.project, max_results=self.page_size
            ),
        )
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
        pager = self._call(
            self.firewalls_client.list,
            request=self.v1.ListFirewallsRequest(project=self.project, max_results=self.page_size),
        )
        try:
            return [
                Rule(
                    name=f.name,
                    source_ranges=tuple(f.source_ranges),
                    ports=tuple(p for a in f.allowed for p in a.ports),
                    description=f.description,
                    target_tags=tuple(f.target_tags),
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

    def set_tags(self, inst: Instance, tags: list[str]) -> None:
        self._wait(
            self.instances_client.set_tags,
            project=self.project,
            zone=inst.zone,
            instance=inst.name,
            tags_resource=self.v1.Tags(fingerprint=inst.tags_fingerprint, items=tags),
        )

    def _policy(self, zone: str, name: str) -> Any:
        return self._call(
            self.instances_client.get_iam_policy, project=self.project, zone=zone, resource=name
        )

    def login_members(self, zone: str, name: str) -> set[str]:
        """The e-mails holding `roles/compute.osLogin` on the instance."""
        policy = self._policy(zone, name)
        return {
            m.removeprefix("user:")
            for b in policy.bindings
            if b.role == OS_LOGIN_ROLE
            for m in b.members
            if m.startswith("user:")
        }

    def set_login_members(self, zone: str, name: str, emails: set[str]) -> None:
        """Make the instance's `roles/compute.osLogin` binding exactly these people (other
        bindings kept), quoting the etag read so a concurrent change is not overwritten."""
        policy = self._policy(zone, name)
        bindings = [b for b in policy.bindings if b.role != OS_LOGIN_ROLE]
        if emails:
            bindings.append(
                self.v1.Binding(role=OS_LOGIN_ROLE, members=[f"user:{e}" for e in sorted(emails)])
            )
        self._call(
            self.instances_client.set_iam_policy,
            project=self.project,
            zone=zone,
            resource=name,
            zone_set_policy_request_resource=self.v1.ZoneSetPolicyRequest(
                policy=self.v1.Policy(bindings=bindings, etag=policy.etag, version=1)
            ),
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
                target_tags=list(rule.target_tags),
            ),
        )

    def delete_rule(self, name: str) -> None:
        self._wait(self.firewalls_client.delete, project=self.project, firewall=name)

    def start(self, zone: str, name: str) -> None:
        self._wait(self.instances_client.start, project=self.project, zone=zone, instance=name)

    def stop(self, zone: str, name: str, *, discard_local_ssd: bool) -> None:
        # `discard_local_ssd` is not a flattened argument of `stop`: it goes in the request.
        self._wait(
            self.instances_client.stop,
            request=self.v1.StopInstanceRequest(
                project=self.project,
                zone=zone,
                instance=name,
                discard_local_ssd=discard_local_ssd,
            ),
        )
