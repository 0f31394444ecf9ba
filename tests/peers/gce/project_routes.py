"""The project-level reads `manage.py compute_preflight` makes, for the local Compute Engine peer
(serve.py hands every request here first; what this module does not answer, serve.py does):

- Compute Engine `projects.get` (common instance metadata, global quotas) and `regions.get`
  (regional quotas, with usage counted from the peer's own instances and addresses);
- Cloud Resource Manager `projects.testIamPermissions` (v3), which the real client library
  reaches at `/v3/projects/{project}:testIamPermissions` on the same loopback endpoint;
- the Organization Policy API's `projects.policies.getEffectivePolicy` (v2, orgpolicy.py).

`firewalls.list` stays serve.py's; planted rules are stored in its table as full `Firewall`
JSON. Responses are built with the client library's own message types (`compute_v1`,
`iam_policy_pb2`) and request bodies parsed with them, unknown fields refused as the API does.

Planting (like POST /_faults): POST /_project with any of
  {"metadata": {"enable-oslogin": "TRUE"}, "quotas": {"us-central1": {"NVIDIA_H100_GPUS": 16}},
   "global_quotas": {"GPUS_ALL_REGIONS": 8}, "denied": ["compute.firewalls.create"],
   "firewalls": [{...Firewall JSON...}]}
Everything planted is forgotten at the next /_seed.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

# Imported at start-up (seconds on a busy machine), so the first request never waits for them.
from google.cloud import compute_v1
from google.iam.v1 import iam_policy_pb2
from google.protobuf import json_format

from tests.peers.gce import orgpolicy

# A project the course's grant was approved for: room for the demo's 8 nodes × 8 H100s in one
# region, and an address for each. New projects start far lower (GPU quotas often at 0):
# https://cloud.google.com/compute/resource-usage#gpu_quota
DEFAULT_REGION_QUOTAS = {
    "NVIDIA_H100_GPUS": 64.0,
    "PREEMPTIBLE_NVIDIA_H100_GPUS": 0.0,
    "STATIC_ADDRESSES": 16.0,
    "IN_USE_ADDRESSES": 16.0,
}
DEFAULT_GLOBAL_QUOTAS = {"GPUS_ALL_REGIONS": 64.0, "FIREWALLS": 200.0}
# Accelerator types → the regional quota metric they count against (the GPU quota table:
# https://cloud.google.com/compute/resource-usage#gpu_quota). `Quota.metric` is a string field in
# the API; compute_v1's Metric enum lags behind it (it has no NVIDIA_H100_GPUS).
ACCELERATOR_METRIC = {
    "nvidia-h100-80gb": "NVIDIA_H100_GPUS",
    "nvidia-h100-mega-80gb": "NVIDIA_H100_MEGA_GPUS",
    "nvidia-h200-141gb": "NVIDIA_H200_GPUS",
    "nvidia-a100-80gb": "NVIDIA_A100_80GB_GPUS",
    "nvidia-tesla-a100": "NVIDIA_A100_GPUS",
    "nvidia-l4": "NVIDIA_L4_GPUS",
    "nvidia-tesla-t4": "NVIDIA_T4_GPUS",
}
# Instances in these states hold their GPUs (and count against the quota); TERMINATED (stopped)
# and SUSPENDED ones do not: https://cloud.google.com/compute/resource-usage#gpu_quota
HOLDING = {"PROVISIONING", "STAGING", "RUNNING", "STOPPING", "REPAIRING"}
# Standard query parameters every Google API accepts (https://cloud.google.com/apis/docs/system-parameters);
# the client adds `$alt`. Anything else on a GET without parameters of its own is refused.
SYSTEM_PARAMS = {"$alt", "alt", "fields", "prettyPrint", "quotaUser", "key", "$.xgafv"}
REGION_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")

PLANTED: dict[str, Any] = {}
_LOCK = threading.Lock()


def reset() -> None:
    with _LOCK:
        PLANTED.clear()
        PLANTED.update(
            {
                "metadata": {},
                "quotas": {},
                "global_quotas": {},
                "denied": set(),
                "fingerprint": "project-md-1",
            }
        )


reset()


class Refused(Exception):
    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


def _region_of(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def _regions(state: dict[str, Any]) -> set[str]:
    found = {_region_of(i["zone"]) for i in state["instances"].values()}
    found |= {a["region"] for a in state["addresses"].values()}
    return found | set(PLANTED["quotas"]) | {"us-central1", "us-east4", "europe-west4"}


def _usage(state: dict[str, Any], region: str) -> dict[str, float]:
    used: dict[str, float] = {}
    for i in state["instances"].values():
        if _region_of(i["zone"]) != region:
            continue
        if i["status"] in HOLDING:
            metric = ACCELERATOR_METRIC.get(i.get("gpu", ""), "")
            if metric:
                used[metric] = used.get(metric, 0.0) + float(i.get("gpus", 0))
        if i.get("access"):
            used["IN_USE_ADDRESSES"] = used.get("IN_USE_ADDRESSES", 0.0) + 1
    static = [a for a in state["addresses"].values() if a["region"] == region]
    used["STATIC_ADDRESSES"] = float(len(static))
    return used


def _quotas(limits: dict[str, float], used: dict[str, float]) -> list[Any]:

    return [
        compute_v1.Quota(metric=m, limit=limit, usage=used.get(m, 0.0))
        for m, limit in sorted(limits.items())
    ]


def _only_system_params(query: dict[str, list[str]]) -> None:
    unknown = sorted(set(query) - SYSTEM_PARAMS)
    if unknown:
        raise Refused(400, f'Invalid JSON payload received. Unknown name "{unknown[0]}"', "invalid")


def project_get(state: dict[str, Any], base: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """https://cloud.google.com/compute/docs/reference/rest/v1/projects/get — the Project
    resource: `commonInstanceMetadata` (items + fingerprint) and the project's global quotas."""

    _only_system_params(query)
    project = state["project"]
    # One project metadata for the whole peer: what /_seed set (serve.py, which OS Login's rules
    # read) with what a preflight test planted on top.
    seeded = state.get("project_metadata", {"items": [], "fingerprint": ""})
    items = {i["key"]: i.get("value", "") for i in seeded.get("items", [])}
    items.update(PLANTED["metadata"])
    metadata = compute_v1.Metadata(
        kind="compute#metadata",
        fingerprint=seeded.get("fingerprint") or PLANTED["fingerprint"],
        items=[compute_v1.Items(key=k, value=v) for k, v in items.items()],
    )
    gpus = sum(
        float(i.get("gpus", 0)) for i in state["instances"].values() if i["status"] in HOLDING
    )
    limits = {**DEFAULT_GLOBAL_QUOTAS, **PLANTED["global_quotas"]}
    used = {"GPUS_ALL_REGIONS": gpus, "FIREWALLS": float(len(state["firewalls"]))}
    out = compute_v1.Project(
        kind="compute#project",
        name=project,
        id="1234567890",
        self_link=f"{base}/compute/v1/projects/{project}",
        common_instance_metadata=metadata,
        quotas=_quotas(limits, used),
        default_network_tier="PREMIUM",
    )
    return dict(json.loads(compute_v1.Project.to_json(out)))


def region_get(
    state: dict[str, Any], base: str, region: str, query: dict[str, list[str]]
) -> dict[str, Any]:
    """https://cloud.google.com/compute/docs/reference/rest/v1/regions/get — a Region with its
    `quotas` (metric, limit, usage); an unknown region is 404 notFound."""

    _only_system_params(query)
    project = state["project"]
    if not REGION_NAME.match(region) or region not in _regions(state):
        raise Refused(
            404, f"The resource 'projects/{project}/regions/{region}' was not found", "notFound"
        )
    limits = {**DEFAULT_REGION_QUOTAS, **PLANTED["quotas"].get(region, {})}
    zones = sorted({i["zone"] for i in state["instances"].values()} | {f"{region}-a"})
    out = compute_v1.Region(
        kind="compute#region",
        name=region,
        status="UP",
        self_link=f"{base}/compute/v1/projects/{project}/regions/{region}",
        zones=[
            f"{base}/compute/v1/projects/{project}/zones/{z}"
            for z in zones
            if _region_of(z) == region
        ],
        quotas=_quotas(limits, _usage(state, region)),
    )
    return dict(json.loads(compute_v1.Region.to_json(out)))


def test_iam_permissions(state: dict[str, Any], project: str, body: Any) -> dict[str, Any]:
    """https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions —
    the subset of the asked permissions the caller holds on the project ("There are no
    permissions required for making this API call"). Permissions with wildcards (such as '*'
    or 'storage.*') are not allowed (google.iam.v1 TestIamPermissionsRequest)."""
    if project != state["project"]:
        # Resource Manager answers 403 for a project the caller cannot see, not 404.
        raise Refused(
            403,
            f"The caller does not have permission on projects/{project}",
            "forbidden",
        )
    request = iam_policy_pb2.TestIamPermissionsRequest()
    try:
        json_format.ParseDict(body, request, ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        raise Refused(400, f"Invalid JSON payload received. {exc}", "badRequest") from exc
    wild = [p for p in request.permissions if "*" in p]
    if wild:
        raise Refused(400, f"Permissions with wildcards are not allowed: {wild[0]}", "badRequest")
    granted = [p for p in request.permissions if p not in PLANTED["denied"]]
    response = iam_policy_pb2.TestIamPermissionsResponse(permissions=granted)
    return dict(json_format.MessageToDict(response))


def plant(state: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:

    with _LOCK:
        PLANTED["metadata"].update(body.get("metadata", {}))
        if body.get("metadata") and "project_metadata" in state:
            # serve.py's OS Login rules read the project's metadata from the peer's state.
            kept = [
                i for i in state["project_metadata"]["items"] if i["key"] not in body["metadata"]
            ]
            planted = [{"key": k, "value": v} for k, v in body["metadata"].items()]
            state["project_metadata"] = {
                "items": kept + planted,
                "fingerprint": f"planted-{len(kept) + len(planted)}",
            }
        for region, limits in body.get("quotas", {}).items():
            PLANTED["quotas"].setdefault(region, {}).update(limits)
        PLANTED["global_quotas"].update(body.get("global_quotas", {}))
        PLANTED["denied"] |= set(body.get("denied", []))
        for rule in body.get("firewalls", []):
            # A planted rule is a real Firewall resource: the library's type refuses a typo.
            try:
                compute_v1.Firewall.from_json(json.dumps(rule))
            except Exception as exc:  # json_format.ParseError: an unknown or mistyped field
                raise Refused(400, f"not a Firewall resource: {exc}", "invalid") from exc
            state["firewalls"][rule["name"]] = {**rule}
        return {k: sorted(v) if isinstance(v, set) else v for k, v in PLANTED.items()}


def handle(
    handler: Any,
    method: str,
    path: str,
    query: dict[str, list[str]],
    body: Any,
    state: dict[str, Any],
    lock: Any,
) -> bool:
    """Answer the request if it is one of this module's; False hands it back to serve.py."""
    host, port = handler.server.server_address[:2]
    base = f"http://{host}:{port}"
    if path == "/_seed":
        reset()
        return False  # serve.py seeds the instances and addresses
    try:
        if path == "/_project" and method == "POST":
            with lock:
                handler._send(200, plant(state, body))
            return True
        m = re.match(r"^/v2/projects/([^/]+)/policies/([^/:]+):getEffectivePolicy$", path)
        if m and method == "GET":
            with lock:
                try:
                    answer = orgpolicy.get_effective_policy(
                        state, PLANTED["denied"], m.group(1), m.group(2), query, body, SYSTEM_PARAMS
                    )
                except orgpolicy.Refused as exc:
                    handler._send(exc.code, exc.body())
                    return True
                handler._send(200, answer)
            return True
        m = re.match(r"^/v3/projects/([^/:]+):testIamPermissions$", path)
        if m and method == "POST":
            with lock:
                handler._send(200, test_iam_permissions(state, m.group(1), body))
            return True
        m = re.match(r"^/compute/v1/projects/([^/]+)(?:/regions/([^/]+))?$", path)
        if m and method == "GET":
            if m.group(1) != state["project"]:
                return False  # serve.py's 404 for another project
            with lock:
                if m.group(2) is None:
                    handler._send(200, project_get(state, base, query))
                else:
                    handler._send(200, region_get(state, base, m.group(2), query))
            return True
    except Refused as exc:
        handler._error(exc.code, exc.message, exc.reason)
        return True
    return False
