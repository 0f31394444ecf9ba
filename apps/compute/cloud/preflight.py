"""The preflight an operator runs before term (`manage.py compute_preflight <course>` and the
staff page Compute → Cloud project → Preflight): read-only calls against the configured GCP
project, each turned into rows of (check, status, finding, fix).

- **Permissions**: `testIamPermissions` for every permission the operator guide lists
  (`REQUIRED_PERMISSIONS`; a test holds docs/operators.md to the same list).
- **GPU quota** per region and across regions, against the course's nodes all running at once
  (what other instances in the project already hold counts too); **address quota** per region
  (static addresses still to reserve, external addresses in use).
- **OS Login**: `enable-oslogin` in the project's or a node's metadata makes the VMs ignore
  `ssh-keys`, which is how courseops lets students in unless the board has recorded OS Login
  for the node (then it grants roles/compute.osLogin instead). The organisation policy
  `constraints/compute.requireOsLogin` (read with the Organization Policy API's
  `getEffectivePolicy`) turns OS Login on whatever the metadata says: enforced, the course
  must be set up for OS Login or every student is locked out; unreadable (403), the row names
  the permission and the role that grants it.
- **Firewall**: a rule on the course's network with no target that admits every TCP port from
  the nodes' internal addresses (`default-allow-internal`) lets every group reach every node.
- **Inventory**: the instances and addresses the board expects, missing or extra (the same
  comparison as Inventory from the project).

The checks are pure functions of what was read; `run` reads the project (one call per kind, one
per region) and never writes. A check whose read failed is one row with the cloud's reason.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.compute.cloud.providers.base import Address, CloudError, Instance
from apps.compute.cloud.providers.gcp_project import FirewallRule, Quota
from apps.compute.models import Node, StaticIP
from apps.core.models import Course

# The least the service account needs (docs/operators.md, "The course's GCP project").
REQUIRED_PERMISSIONS = (
    "compute.instances.list",
    "compute.instances.get",
    "compute.instances.setMetadata",
    "compute.instances.addAccessConfig",
    "compute.instances.deleteAccessConfig",
    "compute.instances.start",
    "compute.instances.stop",
    "compute.instances.setTags",
    "compute.instances.getIamPolicy",
    "compute.instances.setIamPolicy",
    "compute.projects.get",
    "compute.regions.get",
    "compute.addresses.list",
    "compute.addresses.use",
    "compute.subnetworks.useExternalIp",
    "compute.firewalls.list",
    "compute.firewalls.create",
    "compute.firewalls.delete",
    "compute.networks.updatePolicy",
    "compute.zoneOperations.get",
    "compute.globalOperations.get",
)

# GPU model (the board's text or the instance's accelerator type) → the regional quota metric
# it counts against: https://cloud.google.com/compute/resource-usage#gpu_quota
GPU_METRICS = {
    "h100-80gb": "NVIDIA_H100_GPUS",
    "h100": "NVIDIA_H100_GPUS",
    "h100-mega-80gb": "NVIDIA_H100_MEGA_GPUS",
    "h100-mega": "NVIDIA_H100_MEGA_GPUS",
    "h200-141gb": "NVIDIA_H200_GPUS",
    "h200": "NVIDIA_H200_GPUS",
    "a100-80gb": "NVIDIA_A100_80GB_GPUS",
    "a100": "NVIDIA_A100_GPUS",
    "a100-40gb": "NVIDIA_A100_GPUS",
    "l4": "NVIDIA_L4_GPUS",
    "t4": "NVIDIA_T4_GPUS",
    "v100": "NVIDIA_V100_GPUS",
}
HOLDING = {"PROVISIONING", "STAGING", "RUNNING", "STOPPING", "REPAIRING"}

OK, FINDING, ERROR, NOT_RUN = "ok", "finding", "could not check", "not run"


@dataclass(frozen=True)
class Row:
    check: str
    status: str
    finding: str
    fix: str = ""


@dataclass(frozen=True)
class NodeNeed:
    name: str
    zone: str
    gpu_model: str
    gpu_count: int
    internal_ip: str

    @property
    def region(self) -> str:
        return region_of(self.zone)


@dataclass(frozen=True)
class Report:
    project: str
    rows: list[Row]

    @property
    def findings(self) -> list[Row]:
        return [r for r in self.rows if r.status != OK]

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0


# ------------------------------------------------------------------ pure checks


def region_of(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def gpu_metric(model: str) -> str | None:
    """'H100 80GB' or 'nvidia-h100-80gb' → 'NVIDIA_H100_GPUS'; None when unknown."""
    key = model.strip().lower().replace(" ", "-")
    for prefix in ("nvidia-", "tesla-"):
        key = key.removeprefix(prefix)
    return GPU_METRICS.get(key)


def check_permissions(granted: set[str], project: str) -> list[Row]:
    missing = [p for p in REQUIRED_PERMISSIONS if p not in granted]
    if not missing:
        return [Row("Permissions", OK, f"all {len(REQUIRED_PERMISSIONS)} permissions granted")]
    return [
        Row(
            "Permissions",
            FINDING,
            f"the service account lacks {len(missing)} of {len(REQUIRED_PERMISSIONS)}: "
            + ", ".join(missing),
            f"grant them on project {project}: a custom role with the operator guide's list "
            "(or roles/compute.instanceAdmin.v1 plus roles/compute.securityAdmin) bound to the "
            "service account courseops runs as",
        )
    ]


def _quota_row(
    check: str, quota: Quota | None, need: float, held: float, what: str, fix: str
) -> Row:
    if quota is None:
        return Row(check, FINDING, f"the project has no such quota (0 granted); {what}", fix)
    others = max(quota.usage - held, 0.0)
    if others + need <= quota.limit:
        return Row(
            check,
            OK,
            f"limit {quota.limit:g}, {what}" + (f", others use {others:g}" if others else ""),
        )
    return Row(
        check,
        FINDING,
        f"limit {quota.limit:g} is too low: {what}"
        + (f", and other instances already use {others:g}" if others else ""),
        fix,
    )


def check_gpu_quotas(
    nodes: list[NodeNeed],
    instances: dict[str, Instance],
    region_quotas: dict[str, dict[str, Quota]],
    global_quotas: dict[str, Quota],
) -> list[Row]:
    """Every node of the course running at once fits each region's GPU quota and the
    project's GPUS_ALL_REGIONS; what the course's own running nodes hold is not counted twice."""
    need: dict[tuple[str, str], list[NodeNeed]] = {}
    rows: list[Row] = []
    for n in nodes:
        inst = instances.get(n.name)
        model = inst.gpu_model if inst is not None and inst.gpu_model else n.gpu_model
        metric = gpu_metric(model)
        if metric is None:
            rows.append(
                Row(
                    f"GPU quota ({n.region})",
                    FINDING,
                    f"no quota metric known for {n.name}'s GPU model '{model}'",
                    "check the region's GPU quota by hand (IAM & Admin → Quotas)",
                )
            )
            continue
        need.setdefault((n.region, metric), []).append(n)

    def held(ns: list[NodeNeed]) -> float:
        return float(
            sum(
                instances[n.name].gpu_count
                for n in ns
                if n.name in instances and instances[n.name].status in HOLDING
            )
        )

    for (region, metric), ns in sorted(need.items()):
        gpus = float(sum(n.gpu_count for n in ns))
        rows.append(
            _quota_row(
                f"GPU quota {metric} ({region})",
                region_quotas.get(region, {}).get(metric),
                gpus,
                held(ns),
                f"the course's {len(ns)} node(s) need {gpus:g} when all run",
                f"request {metric} of at least {gpus:g} in {region} (Console: IAM & Admin → "
                "Quotas & System Limits); GPU increases can take days, so ask before term",
            )
        )
    if need:
        every = [n for ns in need.values() for n in ns]
        total = float(sum(n.gpu_count for n in every))
        rows.append(
            _quota_row(
                "GPU quota GPUS_ALL_REGIONS",
                global_quotas.get("GPUS_ALL_REGIONS"),
                total,
                held(every),
                f"the course's {len(every)} node(s) need {total:g} when all run",
                f"request GPUS_ALL_REGIONS of at least {total:g} (a global quota: IAM & Admin → "
                "Quotas & System Limits)",
            )
        )
    return rows


def check_address_quotas(
    nodes: list[NodeNeed],
    board_addresses: list[tuple[str, str]],  # (address, region) of the board's addresses
    project_addresses: list[Address],
    instances: dict[str, Instance],
    region_quotas: dict[str, dict[str, Quota]],
) -> list[Row]:
    """Per region: the board's addresses not yet reserved fit STATIC_ADDRESSES, and every node
    holding an external address at once fits IN_USE_ADDRESSES."""
    rows: list[Row] = []
    reserved = {a.address for a in project_addresses}
    regions = sorted({n.region for n in nodes} | {r for _, r in board_addresses})
    for region in regions:
        quotas = region_quotas.get(region, {})
        missing = [a for a, r in board_addresses if r == region and a not in reserved]
        static = quotas.get("STATIC_ADDRESSES")
        wanted = (static.usage if static else 0) + len(missing)
        if static is None or static.limit - static.usage < len(missing):
            rows.append(
                Row(
                    f"Address quota STATIC_ADDRESSES ({region})",
                    FINDING,
                    f"{len(missing)} of the board's addresses are still to reserve, and the "
                    + (
                        f"limit {static.limit:g} leaves room for {static.limit - static.usage:g}"
                        if static
                        else "region lists no such quota"
                    ),
                    f"request STATIC_ADDRESSES of at least {wanted:g} in {region}",
                )
            )
        else:
            rows.append(
                Row(
                    f"Address quota STATIC_ADDRESSES ({region})",
                    OK,
                    f"limit {static.limit:g}, {static.usage:g} reserved, {len(missing)} to reserve",
                )
            )
        here = [n for n in nodes if n.region == region]
        if here:
            held = float(
                sum(1 for n in here if n.name in instances and instances[n.name].external_ip)
            )
            rows.append(
                _quota_row(
                    f"Address quota IN_USE_ADDRESSES ({region})",
                    quotas.get("IN_USE_ADDRESSES"),
                    float(len(here)),
                    held,
                    f"the course's {len(here)} node(s) each hold an external address",
                    f"request IN_USE_ADDRESSES of at least {len(here)} in {region}",
                )
            )
    return rows


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


ORG_OS_LOGIN = "compute.requireOsLogin"
ORG_POLICY_ROLE = "roles/orgpolicy.policyViewer"


@dataclass(frozen=True)
class OrgPolicy:
    """What the Organization Policy API said of constraints/compute.requireOsLogin on the
    project: enforced or not, or, when it could not be read, why (and which permission the
    403 named)."""

    enforced: bool | None
    problem: str = ""
    permission: str = ""


def _org_text(project: str) -> str:
    return (
        f"the organisation policy constraints/{ORG_OS_LOGIN}, when enforced, turns it on "
        "and refuses turning it off (`gcloud org-policies describe "
        f"{ORG_OS_LOGIN} --project {project} --effective` shows it)"
    )


def _os_login_nodes(project_on: bool, instances: dict[str, Instance]) -> list[str]:
    return sorted(
        name
        for name, i in instances.items()
        if (_on(i.metadata.get("enable-oslogin")) if "enable-oslogin" in i.metadata else project_on)
    )


def check_os_login(
    project: str,
    project_metadata: dict[str, str],
    instances: dict[str, Instance],
    recorded: dict[str, bool] | None = None,
    org: OrgPolicy | None = None,
) -> list[Row]:
    """OS Login on means the guest ignores `ssh-keys` metadata. A node's own `enable-oslogin`
    overrides the project's: https://cloud.google.com/compute/docs/oslogin/set-up-oslogin.
    Where the board has recorded OS Login for every such node (`recorded`, Node.os_login, which
    Sync and reconcile take from the instance), courseops grants roles/compute.osLogin on it to
    the members' Google identities and shows their OS Login usernames, so it is no finding.
    Where the organisation policy enforces OS Login (`org`), check_org_os_login says it."""
    recorded = recorded or {}
    org_text = _org_text(project)
    if org is not None and org.enforced:
        return [
            Row(
                "OS Login",
                OK,
                f"constraints/{ORG_OS_LOGIN} is enforced, so OS Login is on for every node "
                "whatever the metadata says (see OS Login org policy)",
            )
        ]
    project_on = _on(project_metadata.get("enable-oslogin"))
    on_nodes = _os_login_nodes(project_on, instances)
    if not on_nodes and not project_on:
        return [
            Row(
                "OS Login",
                OK,
                "enable-oslogin is not TRUE in the project or on any node, so the nodes honour "
                f"the ssh-keys courseops writes; {org_text}",
            )
        ]
    where = (
        f"enable-oslogin=TRUE in the project metadata, so on {len(on_nodes)} of the course's "
        f"{len(instances)} node(s)"
        if project_on
        else "enable-oslogin=TRUE on " + ", ".join(on_nodes)
    )
    unrecorded = [n for n in on_nodes if not recorded.get(n)]
    if on_nodes and not unrecorded:
        return [
            Row(
                "OS Login",
                OK,
                f"OS Login is on ({where}) and the board has recorded it for each: courseops "
                "grants roles/compute.osLogin on each node to its group's Google identities "
                "(their campus e-mail) and shows them their OS Login usernames",
            )
        ]
    return [
        Row(
            "OS Login",
            FINDING,
            f"OS Login is on ({where}): the nodes ignore ssh-keys metadata, so no student can "
            "log in with the keys courseops puts there"
            + (
                f"; the board still has {len(unrecorded)} of them on ssh-keys"
                if unrecorded and len(unrecorded) < len(on_nodes)
                else ""
            ),
            "keep OS Login and press “Check now and fix what differs” on the Cloud project "
            "page (or wait for the next reconcile): courseops records it, grants "
            "roles/compute.osLogin on each node to its "
            "group's Google identities and shows their OS Login usernames; or turn it off with "
            f"`gcloud compute project-info add-metadata --project {project} --metadata "
            "enable-oslogin=FALSE` (and remove it from the nodes' own metadata); if "
            + org_text
            + ", ask the organisation's administrators for an exception for this project",
        )
    ]


def check_org_os_login(
    project: str,
    org: OrgPolicy,
    instances: dict[str, Instance],
    recorded: dict[str, bool],
) -> list[Row]:
    """Many university organisations enforce constraints/compute.requireOsLogin, which turns
    OS Login on for every VM whatever `enable-oslogin` says
    (https://cloud.google.com/compute/docs/oslogin/manage-oslogin-in-an-org). Then the course is
    set up only if courseops treats every node as OS Login — the instance's metadata says so
    (which is what makes the provider grant roles/compute.osLogin instead of writing ssh-keys)
    and the board recorded it (the usernames students are shown); otherwise every student on
    the other nodes is locked out."""
    check = "OS Login org policy"
    if org.permission:
        return [
            Row(
                check,
                FINDING,
                f"the service account may not read the organisation's policies on project "
                f"{project}: getEffectivePolicy answered {org.problem}; so nothing says whether "
                f"constraints/{ORG_OS_LOGIN} locks every student out",
                f"grant {ORG_POLICY_ROLE} (Organization Policy Viewer, which holds "
                f"{org.permission}) on project {project} to the service account courseops "
                "runs as: `gcloud projects add-iam-policy-binding "
                f"{project} --member serviceAccount:SA --role {ORG_POLICY_ROLE}`",
            )
        ]
    if org.enforced is None:
        return [Row(check, ERROR, f"the cloud did not answer: {org.problem}")]
    if not org.enforced:
        return [
            Row(
                check,
                OK,
                f"constraints/{ORG_OS_LOGIN} is not enforced on project {project} (its "
                "effective policy, read just now): enable-oslogin decides",
            )
        ]
    locked = sorted(n for n, i in instances.items() if not (i.os_login and recorded.get(n)))
    if not locked:
        return [
            Row(
                check,
                OK,
                f"constraints/{ORG_OS_LOGIN} is enforced on project {project}, and the course "
                f"is set up for OS Login: all {len(instances)} node(s) are on OS Login on the "
                "board, so courseops grants roles/compute.osLogin on each to its group's Google "
                "identities (campus e-mail) and shows them their OS Login usernames",
            )
        ]
    return [
        Row(
            check,
            FINDING,
            f"constraints/{ORG_OS_LOGIN} is enforced on project {project}, so OS Login is on "
            "for every node whatever the metadata says, but courseops has "
            f"{len(locked)} of {len(instances)} node(s) on ssh-keys ({', '.join(locked)}): "
            "it writes keys those nodes ignore and grants no roles/compute.osLogin, so every "
            "student will be locked out of them",
            f"set up the course for OS Login: `gcloud compute project-info add-metadata "
            f"--project {project} --metadata enable-oslogin=TRUE`, then press “Check now and "
            "fix what differs” on the Cloud project page; courseops then records it, grants "
            "roles/compute.osLogin on each node to "
            "its group's Google identities (their campus e-mail, which must be an account the "
            "organisation knows; outside accounts also need roles/compute.osLoginExternalUser "
            "from its administrators) and shows each student their OS Login username. Or ask "
            "the organisation's administrators for an exception: a policy on project "
            f"{project} with constraints/{ORG_OS_LOGIN} not enforced",
        )
    ]


def _every_tcp_port(rule: FirewallRule) -> bool:
    for protocol, ports in rule.allowed:
        if protocol in ("all", "tcp", "6") and (
            not ports or any(p in ("0-65535", "1-65535") for p in ports)
        ):
            return True
    return False


def check_firewalls(
    project: str, network: str, rules: list[FirewallRule], ips: list[str]
) -> list[Row]:
    """An enabled ingress rule on the network with no target tags or service accounts applies to
    every instance; if it admits every TCP port from the nodes' own addresses, every group's node
    reaches every other's (the default network's default-allow-internal:
    https://cloud.google.com/vpc/docs/firewalls#more_rules_default_vpc)."""
    addresses = [ipaddress.ip_address(ip) for ip in ips if ip]
    found: list[Row] = []
    for r in sorted(rules, key=lambda r: r.name):
        if r.network != network or r.direction != "INGRESS" or r.disabled:
            continue
        if r.target_tags or r.target_service_accounts or not _every_tcp_port(r):
            continue
        ranges = []
        for cidr in r.source_ranges:
            try:
                net = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                continue
            if any(a in net for a in addresses):
                ranges.append(cidr)
        if not ranges:
            continue
        fix = (
            f"delete it (`gcloud compute firewall-rules delete {r.name} --project {project}`) "
            "or give it target tags; courseops's window rules open what a multi-node run needs, "
            "between the lent nodes only"
        )
        found.append(
            Row(
                f"Firewall ({network})",
                FINDING,
                f"{r.name} admits every TCP port from {', '.join(ranges)} to every instance on "
                f"the network: every group can reach every other group's node",
                fix,
            )
        )
    if found:
        return found
    return [
        Row(
            f"Firewall ({network})",
            OK,
            f"no rule on {network} opens every node to the others ({len(rules)} rule(s) read)",
        )
    ]


# ------------------------------------------------------------------ reading the project


def _nodes(course: Course) -> list[NodeNeed]:
    return [
        NodeNeed(n.name, n.zone, n.gpu_model, n.gpu_count, n.internal_ip)
        for n in Node.objects.filter(course=course)
        .exclude(status=Node.Status.RETIRED)
        .order_by("name")
    ]


def not_run_rows(reason: str) -> list[Row]:
    return [
        Row(check, NOT_RUN, reason)
        for check in (
            "Permissions",
            "GPU quota",
            "Address quota",
            "OS Login",
            "OS Login org policy",
            "Firewall",
            "Inventory",
        )
    ]


def _inventory_rows(course: Course, read: tuple[list[Instance], list[Address]]) -> list[Row]:
    from apps.compute.cloud import inventory

    rows = []
    for c in inventory.plan(course, read).changes:
        thing = "instance" if c.what == "node" else "address"
        if c.action == "new":
            finding = f"{thing} {c.name} is in the project but not on the board ({c.detail})"
            fix = "Inventory from the project adds it; or remove it if it is not the course's"
        elif c.action == "gone":
            finding = f"{thing} {c.name} is on the board but not in the project"
            fix = (
                f"create the {thing} in the project, or apply Inventory from the project "
                "to retire it on the board"
            )
        else:
            finding = f"{thing} {c.name} differs: {c.detail}"
            fix = "Inventory from the project brings the board in line"
        rows.append(Row("Inventory", FINDING, finding, fix))
    if not rows:
        rows.append(
            Row(
                "Inventory",
                OK,
                f"every node and address the board expects is in the project, and nothing more "
                f"({len([i for i in read[0] if i.gpu_count])} GPU instances, {len(read[1])} "
                "addresses)",
            )
        )
    return rows


def _guard(check: str, fn: Callable[[], list[Row]]) -> list[Row]:
    try:
        return fn()
    except CloudError as exc:
        return [Row(check, ERROR, f"the cloud did not answer: {exc.reason}", "")]


def _org_policy(gcp: Any) -> OrgPolicy:
    from apps.compute.cloud.providers.gcp_project import PermissionDenied

    try:
        return OrgPolicy(gcp.enforced(ORG_OS_LOGIN))
    except PermissionDenied as exc:
        return OrgPolicy(None, exc.reason, exc.permission)
    except CloudError as exc:
        return OrgPolicy(None, exc.reason)


def run(course: Course) -> Report:
    """Read the course's project and check it; never writes."""
    from apps.compute.cloud.providers import is_live, provider_name
    from apps.compute.cloud.providers.gcp_project import GcpProject
    from apps.compute.cloud.sync import _project, provider

    project = _project(course.pk)
    if not is_live():
        return Report(
            project,
            not_run_rows(
                f"the provider is {provider_name()}: there is no project to read "
                "(COMPUTE_PROVIDER=gcp with the service account's credentials)"
            ),
        )
    if not project:
        return Report(
            project, not_run_rows("the course file names no GCP project (compute.gcp_project)")
        )
    gcp = GcpProject(project)
    nodes = _nodes(course)
    rows: list[Row] = []
    rows += _guard(
        "Permissions",
        lambda: check_permissions(gcp.granted(list(REQUIRED_PERMISSIONS)), project),
    )
    read: dict[str, Any] = {}

    def inventory_read() -> list[Row]:
        p = provider(course.pk)
        read["instances"], read["addresses"] = p.instances(), p.addresses()
        return []

    inventory_problem = _guard("Inventory", inventory_read)
    instances: dict[str, Instance] = {i.name: i for i in read.get("instances", [])}

    ours = {n.name: instances[n.name] for n in nodes if n.name in instances}
    recorded = dict(
        Node.objects.filter(course=course, name__in=list(ours)).values_list("name", "os_login")
    )
    org = _org_policy(gcp)

    def os_login() -> list[Row]:
        metadata, read["global"] = gcp.metadata_and_quotas()
        return check_os_login(project, metadata, ours, recorded, org)

    def quotas() -> list[Row]:
        board = [
            (s.address, s.region)
            for s in StaticIP.objects.filter(course=course)
            .exclude(status=StaticIP.Status.RELEASED)
            .order_by("address")
        ]
        regions = sorted({n.region for n in nodes} | {r for _, r in board})
        by_region = {r: gcp.region_quotas(r) for r in regions}
        out = check_gpu_quotas(nodes, instances, by_region, read["global"])
        if "addresses" in read:
            out += check_address_quotas(nodes, board, read["addresses"], instances, by_region)
        return out

    os_login_rows = _guard("OS Login", os_login)
    if "global" in read:
        rows += _guard("Quotas", quotas)
    else:
        rows.append(Row("Quotas", ERROR, "the project could not be read (see OS Login)"))
    rows += os_login_rows
    rows += check_org_os_login(project, org, ours, recorded)
    network = str(settings.COMPUTE_NETWORK)
    rows += _guard(
        f"Firewall ({network})",
        lambda: check_firewalls(project, network, gcp.firewalls(), [n.internal_ip for n in nodes]),
    )
    if inventory_problem:
        rows += inventory_problem
    else:
        rows += _inventory_rows(course, (read["instances"], read["addresses"]))
    return Report(project, rows)
