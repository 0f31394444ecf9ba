"""The Organization Policy API (v2) as the local Compute Engine peer serves it, for the one call
`manage.py compute_preflight` makes: `projects.policies.getEffectivePolicy`, which the real
`google-cloud-org-policy` client (REST transport) reaches at
`GET /v2/projects/{project}/policies/{constraint}:getEffectivePolicy` on the same loopback
endpoint as Compute Engine. project_routes.py hands the request here.

The rules it follows, each from the Org Policy v2 REST reference
(https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/projects.policies/
getEffectivePolicy and .../rest/v2/organizations.policies#Policy):

- The path is `{name=projects/*/policies/*}:getEffectivePolicy` and "The request body must be
  empty"; the request is `GetEffectivePolicyRequest(name)`, built here with the library's own
  type, and only the standard system parameters may be in the query.
- The answer is a `Policy`: "the result of merging policies in the resource hierarchy and
  evaluating conditions. The returned policy will not have an etag or condition set". For a
  boolean constraint such as `compute.requireOsLogin` an enforced policy is one rule
  `{"enforce": true}` ("In policies for boolean constraints … there must be one and only one
  policy rule where condition is unset"). Enforced higher up (the organisation or a folder), it
  is inherited by the project; a policy on the project itself overrides it (a project's own
  exception: `{"enforce": false}`). With no policy anywhere the answer has no rules, and the
  constraint's default applies — for `compute.requireOsLogin`, not enforced
  (https://cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints).
- "Authorization requires the following IAM permission on the specified resource name:
  orgpolicy.policies.get" — the permission the IAM roles list as `orgpolicy.policy.get`
  (Organization Policy Viewer, roles/orgpolicy.policyViewer, grantable on a project:
  https://cloud.google.com/iam/docs/roles-permissions/orgpolicy). Without it the API answers
  403 PERMISSION_DENIED with a `google.rpc.ErrorInfo` (reason IAM_PERMISSION_DENIED, the
  permission in its metadata: https://cloud.google.com/apis/design/errors#error_info). A
  project the caller cannot see gets the same 403, never a 404.
- A constraint that does not exist is `NOT_FOUND` (404), as the API's create/patch/delete
  methods document for an unknown constraint.

Planting: `STATE["org_policies"]` (serve.py: `/_seed` and `/_set`) lists the constraints the
organisation enforces; `STATE["org_policy_exceptions"]` those the project turns off for itself;
`orgpolicy.policy.get` in project_routes.py's `denied` takes the permission away.
"""

from __future__ import annotations

import json
from typing import Any

from google.cloud import orgpolicy_v2
from google.protobuf import json_format
from google.rpc import error_details_pb2

PERMISSION = "orgpolicy.policy.get"
# The constraints this peer's project knows: the boolean constraints courseops reads or a test
# plants (https://cloud.google.com/resource-manager/docs/organization-policy/org-policy-
# constraints), and the custom constraint on firewall rules (policies.py).
KNOWN = {
    "compute.requireOsLogin",
    "compute.skipDefaultNetworkCreation",
    "compute.disableSerialPortAccess",
    "iam.disableServiceAccountKeyCreation",
    "custom.firewallRuleNamesItsTargets",
}


class Refused(Exception):
    def __init__(self, code: int, message: str, status: str, details: list[Any]) -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.details = code, message, status, details

    def body(self) -> dict[str, Any]:
        """The google.rpc.Status JSON every v2 Google API answers an error with."""
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "status": self.status,
                "details": self.details,
            }
        }


def effective(state: dict[str, Any], constraint: str) -> bool | None:
    """True enforced, False turned off by the project's own policy, None no policy anywhere."""
    if constraint in state.get("org_policy_exceptions", []):
        return False
    if constraint in state.get("org_policies", []):
        return True
    return None


def _denied(project: str, constraint: str) -> Refused:
    resource = f"//cloudresourcemanager.googleapis.com/projects/{project}"
    info = error_details_pb2.ErrorInfo(
        reason="IAM_PERMISSION_DENIED",
        domain="cloudresourcemanager.googleapis.com",
        metadata={"permission": PERMISSION, "resource": f"projects/{project}"},
    )
    detail = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        **json_format.MessageToDict(info),
    }
    return Refused(
        403,
        f"Permission '{PERMISSION}' denied on resource '{resource}/policies/{constraint}' "
        "(or it may not exist).",
        "PERMISSION_DENIED",
        [detail],
    )


def get_effective_policy(
    state: dict[str, Any],
    denied: set[str],
    project: str,
    constraint: str,
    query: dict[str, list[str]],
    body: Any,
    system_params: set[str],
) -> dict[str, Any]:
    request = orgpolicy_v2.GetEffectivePolicyRequest(
        name=f"projects/{project}/policies/{constraint}"
    )
    unknown = sorted(set(query) - system_params)
    if unknown or body:
        what = f'Unknown name "{unknown[0]}"' if unknown else "The request body must be empty"
        raise Refused(400, f"Invalid JSON payload received. {what}.", "INVALID_ARGUMENT", [])
    if project != state["project"] or PERMISSION in denied:
        raise _denied(project, constraint)
    if constraint not in KNOWN:
        raise Refused(404, f"Constraint constraints/{constraint} not found.", "NOT_FOUND", [])
    policy = orgpolicy_v2.Policy(name=request.name)
    enforced = effective(state, constraint)
    if enforced is not None:
        rule = orgpolicy_v2.PolicySpec.PolicyRule(enforce=enforced)
        policy.spec = orgpolicy_v2.PolicySpec(rules=[rule])
    return dict(json.loads(orgpolicy_v2.Policy.to_json(policy)))
