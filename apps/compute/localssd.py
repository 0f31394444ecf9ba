"""Local SSD on the course's nodes: how much a stop may keep or lose. Pure.

Compute Engine requires every stop of an instance with Local SSD disks to say whether their
data is discarded (`discardLocalSsd`; https://cloud.google.com/sdk/gcloud/reference/compute/
instances/stop, https://cloud.google.com/compute/docs/disks/local-ssd#stop_instance).
courseops keeps it unless staff choose otherwise: discarding loses a group's scratch data,
keeping it is billed while the node is stopped. GPU machine types come with a fixed amount
(https://cloud.google.com/compute/docs/gpus: a3-highgpu-8g and a3-megagpu-8g 16 × 375 GiB,
a2-ultragpu-8g 8 × 375 GiB); the cloud's own figure, when read, wins.
"""

from __future__ import annotations

DISK_GB = 375
BUNDLED_DISKS = {
    "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16,
    "a2-ultragpu-1g": 1,
    "a2-ultragpu-2g": 2,
    "a2-ultragpu-4g": 4,
    "a2-ultragpu-8g": 8,
}


def bundled_gb(machine_type: str) -> int:
    """Local SSD that comes with the machine type, in GiB (0 when none is known)."""
    return BUNDLED_DISKS.get(machine_type, 0) * DISK_GB


def describe(gb: int) -> str:
    """'6,000 GiB (about 5.9 TiB)' — the size at stake, as the stop page shows it."""
    if gb >= 1024:
        return f"{gb:,} GiB (about {gb / 1024:.1f} TiB)"
    return f"{gb:,} GiB"
