"""OS Login and who can actually log in to an instance.

- `enable-oslogin` may be set in project metadata (`commonInstanceMetadata`) or instance
  metadata; "instance-level values override the project-level value"
  (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin#enable_oslogin).
- The organisation policy `compute.requireOsLogin` turns OS Login on for every instance of the
  project whatever the metadata says
  (https://cloud.google.com/compute/docs/oslogin/manage-oslogin-in-an-org#enable-org-policy).
- With OS Login on, keys in `ssh-keys` metadata are ignored: "When you enable OS Login …
  Compute Engine … ignores metadata-based SSH keys"; access comes from IAM — a principal needs
  `roles/compute.osLogin` (or `roles/compute.osAdminLogin`) on the instance or the project
  (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin#configure_users,
  https://cloud.google.com/compute/docs/instances/access-overview#oslogin).
- Instance IAM policies (instances.getIamPolicy / setIamPolicy) carry an `etag`; a write with an
  etag that is no longer current is refused with 409 so concurrent read-modify-write cycles do
  not overwrite each other (https://cloud.google.com/iam/docs/policies#etag).
"""

from __future__ import annotations

import base64
from typing import Any

from tests.peers.gce import orgpolicy
from tests.peers.gce.validate import Fail

LOGIN_ROLES = ("roles/compute.osLogin", "roles/compute.osAdminLogin")


def _truthy(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.strip().lower() in ("true", "1", "yes", "y")


def _item(items: list[dict[str, str]], key: str) -> str | None:
    return next((i.get("value", "") for i in items if i.get("key") == key), None)


def enabled(state: dict[str, Any], inst: dict[str, Any]) -> bool:
    if orgpolicy.effective(state, "compute.requireOsLogin"):
        return True
    own = _truthy(_item(inst["metadata"]["items"], "enable-oslogin"))
    if own is not None:
        return own
    return bool(_truthy(_item(state["project_metadata"]["items"], "enable-oslogin")))


def who_can_log_in(state: dict[str, Any], inst: dict[str, Any]) -> list[str]:
    """OS Login on: the `user:` principals holding a login role in the instance's IAM policy
    (their e-mail). Off: the user names of the instance's `ssh-keys` lines, plus the project's
    unless the instance sets `block-project-ssh-keys`."""
    if enabled(state, inst):
        return sorted(
            {
                m.removeprefix("user:")
                for b in inst["iam"]["bindings"]
                if b.get("role") in LOGIN_ROLES
                for m in b.get("members", [])
                if m.startswith("user:")
            }
        )
    lines = (_item(inst["metadata"]["items"], "ssh-keys") or "").splitlines()
    if not _truthy(_item(inst["metadata"]["items"], "block-project-ssh-keys")):
        lines += (_item(state["project_metadata"]["items"], "ssh-keys") or "").splitlines()
    return sorted({ln.split(":", 1)[0] for ln in lines if ":" in ln})


def policy_json(inst: dict[str, Any]) -> dict[str, Any]:
    iam = inst["iam"]
    etag = base64.b64encode(f"etag-{iam['version']}".encode()).decode()
    out: dict[str, Any] = {"version": 1, "etag": etag}
    if iam["bindings"]:
        out["bindings"] = iam["bindings"]
    return out


def set_policy(inst: dict[str, Any], policy: dict[str, Any]) -> dict[str, Any]:
    current = policy_json(inst)["etag"]
    if policy.get("etag") and policy["etag"] != current:
        raise Fail(
            409,
            "There were concurrent policy changes. Please retry the whole read-modify-write "
            "with exponential backoff.",
            "conflict",
            "ABORTED",
        )
    inst["iam"] = {"bindings": policy.get("bindings", []), "version": inst["iam"]["version"] + 1}
    return policy_json(inst)
