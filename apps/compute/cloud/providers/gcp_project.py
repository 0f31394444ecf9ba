"""Project-level reads of the course's GCP project, for `compute_preflight`: which of a list of
permissions the service account holds (Cloud Resource Manager's `projects.testIamPermissions`,
the only API that answers for project-wide permissions such as `compute.firewalls.create`),
the project's common instance metadata and quotas, each region's quotas, the network's
firewall rules with their targets, and whether the organisation enforces a boolean constraint on
the project (the Organization Policy API's `getEffectivePolicy`). Read-only; the same credentials
and endpoint as the provider (`COMPUTE_ENDPOINT` points every client at the tests' local peer,
which serves all these APIs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.compute.cloud.providers.base import CloudError
from apps.compute.cloud.providers.gcp import _last, _translate


@dataclass(frozen=True)
class Quota:
    metric: str
    limit: float
    usage: float


@dataclass(frozen=True)
class FirewallRule:
    name: str
    network: str
    direction: str
    disabled: bool
    source_ranges: tuple[str, ...]
    source_tags: tuple[str, ...]
    target_tags: tuple[str, ...]
    target_service_accounts: tuple[str, ...]
    allowed: tuple[tuple[str, tuple[str, ...]], ...]  # (protocol, ports); no ports = every port


class PermissionDenied(CloudError):
    """403 PERMISSION_DENIED: the service account lacks `permission` on the project."""

    def __init__(self, reason: str, permission: str) -> None:
        super().__init__(reason, retryable=False, code=403)
        self.permission = permission


def _client_kwargs() -> dict[str, Any]:
    kwargs: dict[str, Any] = {"transport": "rest"}
    if settings.COMPUTE_ENDPOINT:
        from google.api_core.client_options import ClientOptions
        from google.auth.credentials import AnonymousCredentials

        kwargs["client_options"] = ClientOptions(api_endpoint=settings.COMPUTE_ENDPOINT)
        kwargs["credentials"] = AnonymousCredentials()
    return kwargs


class GcpProject:
    def __init__(self, project: str) -> None:
        self.project = project
        self.timeout = float(settings.COMPUTE_CALL_TIMEOUT_S)

    def _call(self, fn: Any, **kw: Any) -> Any:
        try:
            return fn(retry=None, timeout=self.timeout, **kw)
        except Exception as exc:
            raise _translate(exc) from exc

    def granted(self, permissions: list[str]) -> set[str]:
        """The permissions of `permissions` the caller holds on the project."""
        from google.cloud import resourcemanager_v3

        client = resourcemanager_v3.ProjectsClient(**_client_kwargs())
        answer = self._call(
            client.test_iam_permissions,
            request={"resource": f"projects/{self.project}", "permissions": permissions},
        )
        return set(answer.permissions)

    def metadata_and_quotas(self) -> tuple[dict[str, str], dict[str, Quota]]:
        """The project's common instance metadata and its global quotas."""
        from google.cloud import compute_v1

        client = compute_v1.ProjectsClient(**_client_kwargs())
        raw = self._call(client.get, project=self.project)
        items = raw.common_instance_metadata.items if raw.common_instance_metadata else []
        return {i.key: i.value for i in items}, {
            q.metric: Quota(q.metric, q.limit, q.usage) for q in raw.quotas
        }

    def region_quotas(self, region: str) -> dict[str, Quota]:
        from google.cloud import compute_v1

        client = compute_v1.RegionsClient(**_client_kwargs())
        raw = self._call(client.get, project=self.project, region=region)
        return {q.metric: Quota(q.metric, q.limit, q.usage) for q in raw.quotas}

    def firewalls(self) -> list[FirewallRule]:
        from google.cloud import compute_v1

        client = compute_v1.FirewallsClient(**_client_kwargs())
        pager = self._call(client.list, project=self.project)
        try:
            return [
                FirewallRule(
                    name=f.name,
                    network=_last(f.network),
                    direction=f.direction or "INGRESS",
                    disabled=bool(f.disabled),
                    source_ranges=tuple(f.source_ranges),
                    source_tags=tuple(f.source_tags),
                    target_tags=tuple(f.target_tags),
                    target_service_accounts=tuple(f.target_service_accounts),
                    allowed=tuple((a.I_p_protocol, tuple(a.ports)) for a in f.allowed),
                )
                for f in pager
            ]
        except Exception as exc:
            raise _translate(exc) from exc

    def enforced(self, constraint: str) -> bool:
        """Whether the boolean organisation policy `constraint` (e.g. compute.requireOsLogin)
        is in force on the project, wherever in the hierarchy it was set: the effective policy's
        rule `enforce: true`. No rule (no policy anywhere, or a `reset` to the default) is the
        constraint's default, which for the constraints read here is not enforced
        (https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/
        projects.policies/getEffectivePolicy). PermissionDenied names the permission the
        answer's ErrorInfo gives (orgpolicy.policy.get)."""
        from google.api_core import exceptions as gx
        from google.cloud import orgpolicy_v2

        client = orgpolicy_v2.OrgPolicyClient(**_client_kwargs())
        name = f"projects/{self.project}/policies/{constraint}"
        try:
            policy = client.get_effective_policy(name=name, retry=None, timeout=self.timeout)
        except (gx.Forbidden, gx.PermissionDenied) as exc:  # 403 over REST, 7 over gRPC
            metadata = getattr(exc, "metadata", None) or {}
            if exc.reason != "IAM_PERMISSION_DENIED" and "permission" not in metadata:
                raise _translate(exc) from exc  # e.g. 403 rateLimitExceeded
            raise PermissionDenied(
                f"403 {exc.message}", str(metadata.get("permission") or "orgpolicy.policy.get")
            ) from exc
        except Exception as exc:
            raise _translate(exc) from exc
        rules = policy.spec.rules
        # Conditions are evaluated away in an effective policy; a rule without one decides.
        return any(r.enforce for r in rules if not r.condition.expression)
