"""`manage.py compute_preflight` and its page against the local Compute Engine peer, through the
real google-cloud-compute and google-cloud-resource-manager clients: a clean project has no
finding and exits 0; each fault planted in the project (a permission missing, a GPU quota too
low, OS Login on, the default network's default-allow-internal, an instance gone) is named with
its fix and exits 1. The peer's project routes refuse what the real APIs refuse."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import requests
from django.core.management import call_command
from django.test import Client

from apps.compute.cloud import preflight
from apps.compute.models import Node
from apps.core.models import Role
from tests.factories import member

pytestmark = pytest.mark.django_db(transaction=True)

NET = "https://www.googleapis.com/compute/v1/projects/ee290-sp26-compute/global/networks/default"
# The default network's own rules (https://cloud.google.com/vpc/docs/firewalls#more_rules_default_vpc)
ALLOW_SSH = {
    "name": "default-allow-ssh",
    "network": NET,
    "direction": "INGRESS",
    "priority": 65534,
    "sourceRanges": ["0.0.0.0/0"],
    "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}],
}
ALLOW_ICMP = {
    "name": "default-allow-icmp",
    "network": NET,
    "direction": "INGRESS",
    "priority": 65534,
    "sourceRanges": ["0.0.0.0/0"],
    "allowed": [{"IPProtocol": "icmp"}],
}
ALLOW_INTERNAL = {
    "name": "default-allow-internal",
    "network": NET,
    "direction": "INGRESS",
    "priority": 65534,
    "sourceRanges": ["10.128.0.0/9"],
    "allowed": [
        {"IPProtocol": "tcp", "ports": ["0-65535"]},
        {"IPProtocol": "udp", "ports": ["0-65535"]},
        {"IPProtocol": "icmp"},
    ],
}


def _plant(peer, **facts: Any) -> None:  # type: ignore[no-untyped-def]
    r = requests.post(f"{peer.base}/_project", json=facts, timeout=10)
    assert r.status_code == 200, r.text


def _clean(peer, course) -> None:  # type: ignore[no-untyped-def]
    peer.seed_from_board(course)
    _plant(peer, firewalls=[ALLOW_SSH, ALLOW_ICMP], metadata={"enable-oslogin": "FALSE"})


def _preflight(code: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("compute_preflight", code, stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def _flat(text: str) -> str:
    """The table's wrapped cells as one line of words."""
    return re.sub(r"\s+", " ", text)


def test_a_clean_project_has_no_finding_and_exits_0(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    code, out = _preflight(ee290.code)
    assert code == 0, out
    assert "0 finding(s)" in out
    report = preflight.run(ee290)
    assert [r.check for r in report.rows] == [
        "Permissions",
        "GPU quota NVIDIA_H100_GPUS (us-central1)",
        "GPU quota GPUS_ALL_REGIONS",
        "Address quota STATIC_ADDRESSES (us-central1)",
        "Address quota IN_USE_ADDRESSES (us-central1)",
        "OS Login",
        "OS Login org policy",
        "Firewall (default)",
        "Inventory",
    ]
    assert {r.status for r in report.rows} == {"ok"}
    flat = _flat(out)
    assert "all 21 permissions granted" in flat
    assert "limit 64, the course's 8 node(s) need 64 when all run" in flat
    assert "constraints/compute.requireOsLogin" in flat  # said even when clean


FAULTS = {
    "missing permission": (
        {"denied": ["compute.firewalls.create", "compute.instances.setMetadata"]},
        "Permissions",
        "the service account lacks 2 of 21: compute.instances.setMetadata, "
        "compute.firewalls.create",
        "roles/compute.instanceAdmin.v1 plus roles/compute.securityAdmin",
    ),
    "low GPU quota": (
        {"quotas": {"us-central1": {"NVIDIA_H100_GPUS": 32}}},
        "GPU quota NVIDIA_H100_GPUS (us-central1)",
        "limit 32 is too low: the course's 8 node(s) need 64 when all run",
        "request NVIDIA_H100_GPUS of at least 64 in us-central1",
    ),
    "OS Login enforced": (
        {"metadata": {"enable-oslogin": "TRUE"}},
        "OS Login",
        "OS Login is on (enable-oslogin=TRUE in the project metadata, so on 8 of the course's 8 "
        "node(s)): "
        "the nodes ignore "
        "ssh-keys metadata, so no student can log in",
        "--metadata enable-oslogin=FALSE",
    ),
    "default-allow-internal": (
        {"firewalls": [ALLOW_INTERNAL]},
        "Firewall (default)",
        "default-allow-internal admits every TCP port from 10.128.0.0/9 to every instance on "
        "the network: every group can reach every other group's node",
        "gcloud compute firewall-rules delete default-allow-internal --project ee290-sp26-compute",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_planted_fault_is_named_with_its_fix_and_exits_1(ee290, gce_peer, fault) -> None:  # type: ignore[no-untyped-def]
    planted, check, finding, fix = FAULTS[fault]
    _clean(gce_peer, ee290)
    _plant(gce_peer, **planted)
    code, out = _preflight(ee290.code)
    assert code == 1, out
    assert "1 finding(s)" in out
    report = preflight.run(ee290)
    (row,) = report.findings
    assert (row.check, row.status) == (check, "finding")
    assert finding in row.finding
    assert fix in row.fix
    assert finding in _flat(out)


def test_org_policy_is_named_where_os_login_cannot_be_turned_off(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    _plant(gce_peer, metadata={"enable-oslogin": "TRUE"})
    (row,) = preflight.run(ee290).findings
    assert "constraints/compute.requireOsLogin" in row.fix
    assert "ask the organisation's administrators for an exception" in row.fix


def test_instances_and_addresses_the_board_expects_missing_or_extra(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    # node-3 gone from the project; node-8 renamed on the board, so the project's (stopped, so
    # holding no GPU quota) ee290-node-8 is extra and the board's ee290-node-8-old missing.
    gce_peer.change({"ee290-node-3": None, "ee290-node-8": {"status": "TERMINATED"}})
    Node.objects.filter(course=ee290, name="ee290-node-8").update(name="ee290-node-8-old")
    rows = list(preflight.run(ee290).findings)
    assert {r.check for r in rows} == {"Inventory"}
    text = " | ".join(f"{r.finding} → {r.fix}" for r in rows)
    assert "instance ee290-node-3 is on the board but not in the project" in text
    assert "instance ee290-node-8-old is on the board but not in the project" in text
    assert "instance ee290-node-8 is in the project but not on the board" in text
    assert len(rows) == 3


def test_a_cloud_that_does_not_answer_is_a_finding_not_a_crash(ee290, gce_peer, settings) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    settings.COMPUTE_ENDPOINT = "http://127.0.0.1:9"  # nothing listens on the discard port
    report = preflight.run(ee290)
    assert report.exit_code == 1
    assert {r.status for r in report.rows} == {"could not check"}
    said = {r.check: r.finding for r in report.rows}
    for check in (
        "Permissions",
        "OS Login",
        "OS Login org policy",
        "Firewall (default)",
        "Inventory",
    ):
        assert said[check].startswith("the cloud did not answer: could not reach the cloud")
    assert said["Quotas"] == "the project could not be read (see OS Login)"


def test_the_dry_run_has_nothing_to_check_and_says_so(ee290) -> None:  # type: ignore[no-untyped-def]
    code, out = _preflight(ee290.code)
    assert code == 1
    assert "the provider is dry-run: there is no project to read" in _flat(out)


def test_the_page_shows_the_same_table_to_staff_only(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    _plant(gce_peer, firewalls=[ALLOW_INTERNAL])
    url = f"/c/{ee290.code}/compute/cloud/preflight/"
    staff, student = Client(), Client()
    staff.force_login(member(ee290, Role.TA))
    student.force_login(member(ee290, Role.STUDENT))
    page = staff.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "1 finding" in html
    assert "default-allow-internal admits every TCP port from 10.128.0.0/9" in html
    assert "firewall-rules delete default-allow-internal" in html
    assert student.get(url).status_code in (403, 404)


def test_the_operator_guide_lists_exactly_the_permissions_the_preflight_tests() -> None:
    guide = (Path(__file__).resolve().parents[3] / "docs" / "operators.md").read_text()
    start = guide.index("The least the service account needs")
    paragraph = guide[start : guide.index("\n\n", start)]
    assert tuple(re.findall(r"`(compute\.[A-Za-z.]+)`", paragraph)) == (
        preflight.REQUIRED_PERMISSIONS
    )


# ------------------------------------------------------------------ the peer, like the APIs


def test_the_peer_refuses_what_the_real_apis_refuse(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    from google.api_core import exceptions as gx
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    _clean(gce_peer, ee290)
    iam = f"{gce_peer.base}/v3/projects/{gce_peer.project}:testIamPermissions"
    # An unknown field of TestIamPermissionsRequest, and a wildcard permission: 400.
    assert requests.post(iam, json={"permisions": ["a.b.c"]}, timeout=10).status_code == 400
    assert requests.post(iam, json={"permissions": ["compute.*"]}, timeout=10).status_code == 400
    ok = requests.post(iam, json={"permissions": ["compute.instances.get"]}, timeout=10)
    assert ok.json() == {"permissions": ["compute.instances.get"]}
    # regions.get for a region that does not exist: the client raises NotFound.
    regions = compute_v1.RegionsClient(
        transport="rest",
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=gce_peer.base),
    )
    with pytest.raises(gx.NotFound):
        regions.get(project=gce_peer.project, region="mars-north1", retry=None, timeout=5)
    # A query parameter projects.get does not take.
    bad = requests.get(
        f"{gce_peer.base}/compute/v1/projects/{gce_peer.project}?maxResults=5", timeout=10
    )
    assert bad.status_code == 400
    # A planted rule is a Firewall resource: a misspelt field is refused.
    typo = requests.post(
        f"{gce_peer.base}/_project",
        json={"firewalls": [{**ALLOW_SSH, "name": "x", "sourceRange": ["0.0.0.0/0"]}]},
        timeout=10,
    )
    assert typo.status_code != 200
