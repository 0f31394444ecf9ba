"""What courseops asks of a cloud, whichever cloud it is (`gcp` or `dry-run`).

A provider reads instances, addresses and firewall rules and changes exactly the things the
board owns: an instance's `ssh-keys` metadata (with the fingerprint it read, so a concurrent
writer is refused rather than overwritten), its network tags starting with `courseops-` (the
targets of window firewall rules), the `roles/compute.osLogin` binding of its IAM policy when
OS Login is on, its external address, its power (a stop always says what happens to Local SSD
data), and firewall rules whose names start with `courseops-`. Errors come back as `CloudError`
with `retryable` saying whether trying again later may help (429 and 403 `rateLimitExceeded`,
5xx, timeouts, a 412 fingerprint race) or not (any other 403, a quota, a bad request, an
organisation policy); `wait_s` is the least a retry should wait (a minute for a rate quota).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

MANAGED_RULE_PREFIX = "courseops-"
MANAGED_TAG_PREFIX = "courseops-"
OS_LOGIN_ROLE = "roles/compute.osLogin"


@dataclass(frozen=True)
class Instance:
    name: str
    zone: str
    machine_type: str
    status: str
    internal_ip: str
    external_ip: str | None = None
    access_config: str | None = None  # the name of nic0's access config, if it has one
    gpu_model: str = ""
    gpu_count: int = 0
    fingerprint: str = ""  # the metadata fingerprint setMetadata must quote
    ssh_keys: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)  # items other than ssh-keys, kept
    tags: tuple[str, ...] = ()  # network tags
    tags_fingerprint: str = ""  # what setTags must quote
    local_ssd_gb: int = 0  # Local SSD attached (data a stop may keep or discard)
    os_login: bool = False  # enable-oslogin in effect (instance value, else the project's)


@dataclass(frozen=True)
class Address:
    name: str
    region: str
    address: str
    status: str  # RESERVED | IN_USE
    user: str = ""  # the instance name using it


@dataclass(frozen=True)
class Rule:
    name: str
    source_ranges: tuple[str, ...]
    ports: tuple[str, ...]  # "22", "29500-29600"
    description: str = ""
    target_tags: tuple[str, ...] = ()  # the instances it applies to (never empty for ours)


class CloudError(Exception):
    def __init__(
        self, reason: str, *, retryable: bool, code: int | None = None, wait_s: float = 0.0
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.code = code
        self.wait_s = wait_s


class FingerprintConflict(CloudError):
    """Someone changed the metadata between our read and our write (HTTP 412)."""

    def __init__(self, reason: str = "the metadata changed since it was read (412)") -> None:
        super().__init__(reason, retryable=True, code=412)


class Provider(Protocol):
    name: str

    def instances(self) -> list[Instance]: ...
    def instance(self, zone: str, name: str) -> Instance: ...
    def addresses(self) -> list[Address]: ...
    def rules(self) -> list[Rule]: ...
    def set_ssh_keys(self, inst: Instance, value: str) -> None: ...
    def set_tags(self, inst: Instance, tags: list[str]) -> None: ...
    def login_members(self, zone: str, name: str) -> set[str]: ...
    def set_login_members(self, zone: str, name: str, emails: set[str]) -> None: ...
    def attach_address(self, zone: str, name: str, address: str) -> None: ...
    def detach_address(self, zone: str, name: str, access_config: str) -> None: ...
    def insert_rule(self, rule: Rule) -> None: ...
    def delete_rule(self, name: str) -> None: ...
    def start(self, zone: str, name: str) -> None: ...
    def stop(self, zone: str, name: str, *, discard_local_ssd: bool) -> None: ...
