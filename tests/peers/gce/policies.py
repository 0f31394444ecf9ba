"""Which instances a firewall rule reaches, and the organisation policy a project may carry.

- "Every firewall rule has a target … If you omit the target, the rule applies to all instances
  in the VPC network"; target tags and target service accounts narrow it to the instances
  carrying that network tag or running as that account
  (https://cloud.google.com/firewall/docs/firewalls#rule_assignment). `reach` computes it, so a
  test sees what a rule actually opens.
- A project's organisation may enforce a custom constraint on `compute.googleapis.com/Firewall`
  resources (`resource.targetTags`, `resource.targetServiceAccounts` are among the fields a
  condition may read: https://cloud.google.com/firewall/docs/custom-constraints). The course's
  project is modelled with the constraint the course's domain rules ask for — a rule must name
  its targets — and Compute Engine refuses a violating insert with 412 `conditionNotMet`,
  "Operation denied by custom org policy" (https://cloud.google.com/resource-manager/docs/
  organization-policy/creating-managing-custom-constraints#test-custom-constraint).
"""

from __future__ import annotations

from typing import Any

from tests.peers.gce.validate import Fail

FIREWALL_TARGETS = "custom.firewallRuleNamesItsTargets"


def reach(firewall: dict[str, Any], instances: dict[str, dict[str, Any]]) -> list[str]:
    tags = set(firewall.get("targetTags", []))
    if firewall.get("targetServiceAccounts"):
        return []  # the peer's instances run as no service account
    if not tags:
        return sorted(instances)
    return sorted(n for n, i in instances.items() if tags & set(i["tags"]["items"]))


def check_firewall_insert(state: dict[str, Any], body: dict[str, Any]) -> None:
    if FIREWALL_TARGETS not in state.get("org_policies", []):
        return
    if not body.get("targetTags") and not body.get("targetServiceAccounts"):
        raise Fail(
            412,
            f"Operation denied by custom org policy: ['customConstraints/{FIREWALL_TARGETS}'] : "
            "A VPC firewall rule must name its targets (targetTags or targetServiceAccounts); "
            "without them it applies to every instance in the network.",
            "conditionNotMet",
        )
