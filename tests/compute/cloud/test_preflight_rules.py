"""The preflight's checks as pure functions of what was read (no cloud, no database)."""

from __future__ import annotations

from apps.compute.cloud import preflight
from apps.compute.cloud.providers.base import Instance
from apps.compute.cloud.providers.gcp_project import FirewallRule, Quota


def _inst(name: str, **metadata: str) -> Instance:
    return Instance(
        name, "us-central1-a", "a3-highgpu-8g", "RUNNING", "10.128.0.11", metadata=metadata
    )


def test_a_nodes_own_enable_oslogin_overrides_the_projects() -> None:
    nodes = {"n1": _inst("n1"), "n2": _inst("n2", **{"enable-oslogin": "true"})}
    (row,) = preflight.check_os_login("p", {"enable-oslogin": "FALSE"}, nodes)
    assert row.status == "finding"
    assert "enable-oslogin=TRUE on n2" in row.finding
    off = {"n1": _inst("n1", **{"enable-oslogin": "FALSE"})}
    assert preflight.check_os_login("p", {"enable-oslogin": "TRUE"}, off)[0].status == "finding"
    assert preflight.check_os_login("p", {}, off)[0].status == "ok"


def test_os_login_on_for_the_project_is_a_finding_before_any_node_exists() -> None:
    (row,) = preflight.check_os_login("p", {"enable-oslogin": "TRUE"}, {})
    assert row.status == "finding"


def test_gpu_models_map_to_their_quota_metric() -> None:
    assert preflight.gpu_metric("H100 80GB") == "NVIDIA_H100_GPUS"
    assert preflight.gpu_metric("nvidia-h100-80gb") == "NVIDIA_H100_GPUS"
    assert preflight.gpu_metric("nvidia-tesla-a100") == "NVIDIA_A100_GPUS"
    assert preflight.gpu_metric("nvidia-a100-80gb") == "NVIDIA_A100_80GB_GPUS"
    assert preflight.gpu_metric("TPU v5e") is None


def _rule(name: str, **kw: object) -> FirewallRule:
    base: dict[str, object] = {
        "name": name,
        "network": "default",
        "direction": "INGRESS",
        "disabled": False,
        "source_ranges": ("10.128.0.0/9",),
        "source_tags": (),
        "target_tags": (),
        "target_service_accounts": (),
        "allowed": (("all", ()),),
    }
    return FirewallRule(**{**base, **kw})  # type: ignore[arg-type]


def test_only_an_untargeted_rule_opening_every_port_between_the_nodes_is_a_finding() -> None:
    ips = ["10.128.0.11", "10.128.0.12"]
    harmless = [
        _rule("targeted", target_tags=("group-a",)),
        _rule("disabled", disabled=True),
        _rule("ssh-only", allowed=(("tcp", ("22",)),)),
        _rule("elsewhere", source_ranges=("192.168.0.0/16",)),
        _rule("other-net", network="lab"),
        _rule("egress", direction="EGRESS"),
    ]
    assert [r.status for r in preflight.check_firewalls("p", "default", harmless, ips)] == ["ok"]
    rows = preflight.check_firewalls("p", "default", [*harmless, _rule("wide-open")], ips)
    assert [r.finding.split()[0] for r in rows] == ["wide-open"]


def test_the_course_running_nodes_are_not_counted_twice_against_the_gpu_quota() -> None:
    nodes = [
        preflight.NodeNeed(f"n{i}", "us-central1-a", "H100 80GB", 8, f"10.0.0.{i}")
        for i in range(2)
    ]
    running = {
        n.name: Instance(
            n.name,
            n.zone,
            "a3",
            "RUNNING",
            n.internal_ip,
            gpu_model="nvidia-h100-80gb",
            gpu_count=8,
        )
        for n in nodes
    }
    quotas = {"us-central1": {"NVIDIA_H100_GPUS": Quota("NVIDIA_H100_GPUS", 16, 16)}}
    total = {"GPUS_ALL_REGIONS": Quota("GPUS_ALL_REGIONS", 16, 24)}  # 8 held by another project VM
    rows = preflight.check_gpu_quotas(nodes, running, quotas, total)
    assert [(r.check, r.status) for r in rows] == [
        ("GPU quota NVIDIA_H100_GPUS (us-central1)", "ok"),
        ("GPU quota GPUS_ALL_REGIONS", "finding"),
    ]
    assert "other instances already use 8" in rows[1].finding


def test_os_login_the_board_has_recorded_is_no_finding_and_an_enforced_policy_speaks_for_it() -> (
    None
):
    nodes = {"n1": _inst("n1"), "n2": _inst("n2")}
    on = {"enable-oslogin": "TRUE"}
    (row,) = preflight.check_os_login("p", on, nodes, {"n1": True, "n2": True})
    assert row.status == "ok"
    assert "grants roles/compute.osLogin" in row.finding
    (row,) = preflight.check_os_login("p", on, nodes, {"n1": True})
    assert row.status == "finding"
    assert "the board still has 1 of them on ssh-keys" in row.finding
    enforced = preflight.OrgPolicy(True)
    (row,) = preflight.check_os_login("p", {}, nodes, {}, enforced)
    assert row.status == "ok"
    assert "see OS Login org policy" in row.finding
