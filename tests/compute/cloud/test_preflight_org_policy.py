"""Preflight reads the organisation policy constraints/compute.requireOsLogin through the real
google-cloud-org-policy client (REST, the peer's getEffectivePolicy: tests/peers/gce/orgpolicy.py).
Many university organisations enforce it; then OS Login is on for every node whatever the
metadata says, `ssh-keys` is ignored, and a course that courseops still runs on ssh-keys locks
every student out. Each case is checked against what the peer says a student can actually do:
who can log in to the group's node."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from django.test import Client

from apps.compute.cloud import preflight
from apps.compute.cloud import sync as cloud
from apps.compute.models import Node
from apps.core.models import Role
from tests.compute.board.test_os_login_names import lend_a_node
from tests.compute.cloud.test_preflight import _clean, _flat, _plant, _preflight
from tests.factories import member

pytestmark = pytest.mark.django_db(transaction=True)

FIREWALL_TARGETS = "custom.firewallRuleNamesItsTargets"  # the peer's default org policy
ENFORCED = [FIREWALL_TARGETS, "compute.requireOsLogin"]


def _group_on_a_node(course) -> tuple[Node, str]:  # type: ignore[no-untyped-def]
    """A group lent a node and the cloud converged; the node and one member's campus e-mail."""
    alloc, student = lend_a_node(course, "jane.doe@university.edu")
    return Node.objects.get(pk=alloc.node_id), student.email


def _logins(peer, node: Node) -> list[str]:  # type: ignore[no-untyped-def]
    """Who the peer lets log in to the node, by its documented rules (tests/peers/gce/oslogin.py)."""
    state: dict[str, Any] = peer.state()["instances"][node.name]
    return list(state["logins"])


def test_enforced_while_the_course_is_on_ssh_keys_fails_and_says_everyone_is_locked_out(
    ee290, gce_peer
) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    gce_peer.set_project(org_policies=ENFORCED)
    node, _ = _group_on_a_node(ee290)
    # What the finding is about: the keys courseops wrote are there, and nobody can use them.
    assert gce_peer.keys_on(node.name)
    assert _logins(gce_peer, node) == []

    code, out = _preflight(ee290.code)
    assert code == 1, out
    assert "1 finding(s)" in out
    (row,) = preflight.run(ee290).findings
    assert row.check == "OS Login org policy"
    assert (
        "constraints/compute.requireOsLogin is enforced on project ee290-sp26-compute, so OS "
        "Login is on for every node whatever the metadata says, but courseops has 8 of 8 "
        "node(s) on ssh-keys" in row.finding
    )
    assert "every student will be locked out of them" in row.finding
    assert "--metadata enable-oslogin=TRUE" in row.fix
    assert "grants roles/compute.osLogin on each node" in row.fix
    assert "ask the organisation's administrators for an exception" in row.fix
    assert "every student will be locked out of them" in _flat(out)
    # The OS Login row does not tell the operator to turn OS Login off: the policy refuses it.
    said = {r.check: r for r in preflight.run(ee290).rows}
    assert said["OS Login"].status == "ok"
    assert "enable-oslogin=FALSE" not in said["OS Login"].fix

    # The staff page shows the same row.
    staff = Client()
    staff.force_login(member(ee290, Role.TA))
    html = staff.get(f"/c/{ee290.code}/compute/cloud/preflight/").content.decode()
    assert "OS Login org policy" in html
    assert "every student will be locked out of them" in html


def test_enforced_with_the_course_set_up_for_os_login_passes(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    gce_peer.set_project(org_policies=ENFORCED)
    _plant(gce_peer, metadata={"enable-oslogin": "TRUE"})
    cloud.reconcile(ee290)  # the board records OS Login, as the fix's button does
    node, email = _group_on_a_node(ee290)
    assert Node.objects.get(pk=node.pk).os_login is True
    assert email in _logins(gce_peer, node)  # granted roles/compute.osLogin: she can log in

    code, out = _preflight(ee290.code)
    assert code == 0, out
    assert "0 finding(s)" in out
    said = {r.check: r for r in preflight.run(ee290).rows}
    assert said["OS Login org policy"].status == "ok"
    assert "is enforced on project ee290-sp26-compute, and the course is set up for OS Login" in (
        said["OS Login org policy"].finding
    )


def test_not_enforced_passes_with_no_policy_or_a_projects_own_exception(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    node, _ = _group_on_a_node(ee290)
    for change in (
        {"org_policies": [FIREWALL_TARGETS]},  # no policy anywhere: the default, not enforced
        {"org_policies": ENFORCED, "org_policy_exceptions": ["compute.requireOsLogin"]},
    ):
        gce_peer.set_project(**change)
        assert _logins(gce_peer, node)  # the ssh-keys courseops wrote are honoured
        code, out = _preflight(ee290.code)
        assert code == 0, out
        said = {r.check: r for r in preflight.run(ee290).rows}
        assert said["OS Login org policy"].status == "ok"
        assert "constraints/compute.requireOsLogin is not enforced on project" in (
            said["OS Login org policy"].finding
        )


def test_without_the_permission_the_row_names_it_and_the_role_that_grants_it(
    ee290, gce_peer
) -> None:  # type: ignore[no-untyped-def]
    _clean(gce_peer, ee290)
    gce_peer.set_project(org_policies=ENFORCED)
    _plant(gce_peer, denied=["orgpolicy.policy.get"])
    code, out = _preflight(ee290.code)
    assert code == 1, out
    (row,) = preflight.run(ee290).findings
    assert (row.check, row.status) == ("OS Login org policy", "finding")
    assert "Permission 'orgpolicy.policy.get' denied" in row.finding
    assert (
        "grant roles/orgpolicy.policyViewer (Organization Policy Viewer, which holds "
        "orgpolicy.policy.get) on project ee290-sp26-compute" in row.fix
    )
    assert "roles/orgpolicy.policyViewer" in _flat(out)


def test_the_peer_answers_getEffectivePolicy_as_the_api_does(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    from google.api_core import exceptions as gx
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import orgpolicy_v2

    _clean(gce_peer, ee290)
    gce_peer.set_project(org_policies=ENFORCED)
    client = orgpolicy_v2.OrgPolicyClient(
        transport="rest",
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=gce_peer.base),
    )
    name = f"projects/{gce_peer.project}/policies/compute.requireOsLogin"
    policy = client.get_effective_policy(name=name, retry=None, timeout=5)
    assert policy.name == name
    assert [r.enforce for r in policy.spec.rules] == [True]
    assert not policy.etag  # an evaluated policy carries no etag
    # No policy anywhere: no rules, the constraint's default.
    other = name.replace("requireOsLogin", "disableSerialPortAccess")
    assert list(client.get_effective_policy(name=other, retry=None, timeout=5).spec.rules) == []
    # A constraint that does not exist, and a project the caller cannot see.
    with pytest.raises(gx.NotFound):
        client.get_effective_policy(name=name.replace("requireOsLogin", "nope"), retry=None)
    with pytest.raises(gx.Forbidden) as denied:
        client.get_effective_policy(name=name.replace(gce_peer.project, "elsewhere"), retry=None)
    assert denied.value.reason == "IAM_PERMISSION_DENIED"
    assert denied.value.metadata["permission"] == "orgpolicy.policy.get"
    # A query parameter the method does not take.
    url = f"{gce_peer.base}/v2/{name}:getEffectivePolicy?pageSize=5"
    assert requests.get(url, timeout=10).status_code == 400
