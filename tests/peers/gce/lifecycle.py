"""An instance's power states and how long changing them takes.

States (https://cloud.google.com/compute/docs/instances/instance-life-cycle): `start` takes a
TERMINATED instance through STAGING to RUNNING; `stop` takes it through STOPPING to
TERMINATED; `suspend` through SUSPENDING to SUSPENDED; `resume` back through STAGING to
RUNNING. Each is a zone operation that stays RUNNING until the change is done; the delays
(`DELAYS`, seconds) are the peer's, short by default and set per test with POST /_timing.
Stopping an instance that is already stopped "will return without errors" (gcloud
`instances stop` reference, https://cloud.google.com/sdk/gcloud/reference/compute/instances/stop).

Local SSDs (https://cloud.google.com/compute/docs/disks/local-ssd#stop_instance, and the same
gcloud page): "If a VM has any attached Local SSD disks, you must use the --discard-local-ssd
flag to indicate whether or not the Local SSD data should be discarded" — the API's
`discardLocalSsd` query parameter on `stop` and `suspend`; without it the request is refused.
With `discardLocalSsd=false` the data is kept and each disk reads `savedState: PRESERVED` while
the instance is stopped (AttachedDisk.savedState, https://cloud.google.com/compute/docs/
reference/rest/v1/instances); with `true` it is gone when the instance starts again.
The a3-highgpu-8g machine type comes with 16 × 375 GiB of Local SSD
(https://cloud.google.com/compute/docs/gpus#a3-series: "bundled local SSD 6,000 GiB").

Suspend (https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-suspend-resume):
only a RUNNING instance can be suspended ("You cannot suspend an instance that is stopped or
terminated", "… an already suspended instance"), and instances with GPUs attached cannot be
suspended (https://cloud.google.com/compute/docs/instances/suspend-resume-instance#limitations).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.peers.gce.validate import Fail

DELAYS: dict[str, float] = {"start": 0.3, "stop": 0.3, "suspend": 0.3, "resume": 0.3}
BUNDLED_LOCAL_SSDS = {"a3-highgpu-8g": 16, "a3-megagpu-8g": 16, "a2-ultragpu-8g": 8}
LOCAL_SSD_GB = 375

Effect = Callable[[], None]


def local_ssds(inst: dict[str, Any]) -> int:
    return int(inst.get("local_ssds", 0))


def disks_json(inst: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"kind": "compute#attachedDisk", "type": "PERSISTENT", "boot": True, "index": 0}
    ]
    for n in range(local_ssds(inst)):
        disk: dict[str, Any] = {
            "kind": "compute#attachedDisk",
            "type": "SCRATCH",
            "interface": "NVME",
            "index": n + 1,
            "diskSizeGb": str(LOCAL_SSD_GB),
            "deviceName": f"local-ssd-{n}",
        }
        if inst.get("ssd_saved"):
            disk["savedState"] = "PRESERVED"
        out.append(disk)
    return out


def _discard_choice(verb: str, inst: dict[str, Any], query: dict[str, list[str]]) -> bool | None:
    raw = query.get("discardLocalSsd", [None])[0]
    if raw is None:
        if local_ssds(inst):
            raise Fail(
                400,
                "VM has a Local SSD attached but an undefined value for `discard-local-ssd`. "
                "If using gcloud, please add `--discard-local-ssd=false` or "
                "`--discard-local-ssd=true` to your command.",
                "badRequest",
            )
        return None
    if raw.lower() not in ("true", "false"):
        raise Fail(400, f"Invalid value for field 'discardLocalSsd': '{raw}'.", "invalid")
    return raw.lower() == "true"


def change(verb: str, inst: dict[str, Any], query: dict[str, list[str]]) -> tuple[float, Effect]:
    """Begin `verb` on `inst`: set its transitional status now; return the delay and what
    happens when the operation completes."""
    status = inst["status"]
    if verb == "start":
        if status == "RUNNING":
            return 0.0, lambda: None
        if status in ("SUSPENDED", "SUSPENDING"):
            raise Fail(400, "The instance is suspended; use resume.", "resourceNotReady")
        inst["status"] = "STAGING"

        def started() -> None:
            inst["status"] = "RUNNING"
            if not inst.get("ssd_saved"):
                inst["ssd_data"] = ""  # discarded at stop: the disks come back empty
            inst["ssd_saved"] = False

        return DELAYS["start"], started
    if verb == "stop":
        discard = _discard_choice(verb, inst, query)
        if status in ("TERMINATED", "STOPPING"):
            return 0.0, lambda: None
        inst["status"] = "STOPPING"

        def stopped() -> None:
            inst["status"] = "TERMINATED"
            inst["ssd_saved"] = bool(local_ssds(inst)) and discard is False

        return DELAYS["stop"], stopped
    if verb == "suspend":
        if inst.get("gpus"):
            raise Fail(
                400,
                "Instances with guest accelerators do not support suspend.",
                "UNSUPPORTED_OPERATION",
            )
        if status != "RUNNING":
            word = "an already suspended" if status == "SUSPENDED" else "an instance that is"
            raise Fail(
                400,
                f"You cannot suspend {word}{' stopped or terminated' if status != 'SUSPENDED' else ' instance'}.",
                "UNSUPPORTED_OPERATION",
            )
        discard = _discard_choice(verb, inst, query)
        inst["status"] = "SUSPENDING"

        def suspended() -> None:
            inst["status"] = "SUSPENDED"
            inst["ssd_saved"] = bool(local_ssds(inst)) and discard is False

        return DELAYS["suspend"], suspended
    if verb == "resume":
        if status != "SUSPENDED":
            raise Fail(400, "Only a SUSPENDED instance can be resumed.", "UNSUPPORTED_OPERATION")
        inst["status"] = "STAGING"

        def resumed() -> None:
            inst["status"] = "RUNNING"
            if not inst.get("ssd_saved"):
                inst["ssd_data"] = ""
            inst["ssd_saved"] = False

        return DELAYS["resume"], resumed
    raise Fail(404, f"no such method {verb}")
