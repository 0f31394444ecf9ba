"""GPU nodes and static external IPs. The foundation holds the inventory; issue #4 allocates."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class Node(models.Model):
    class Status(models.TextChoices):
        READY = "ready", "Ready"
        MAINTENANCE = "maintenance", "Maintenance"
        FAILED = "failed", "Failed"
        RETIRED = "retired", "Retired"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=63, help_text="GCP instance name.")
    gcp_project = models.CharField(max_length=63)
    zone = models.CharField(max_length=40, help_text="e.g. us-central1-a")
    machine_type = models.CharField(max_length=40, default="a3-highgpu-8g")
    gpu_model = models.CharField(max_length=40, default="H100 80GB")
    gpu_count = models.PositiveSmallIntegerField(default=8)
    internal_ip = models.GenericIPAddressField(protocol="IPv4")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.READY)
    # What the cloud last reported (compute.cloud): RUNNING, STOPPING, TERMINATED, SUSPENDED …
    cloud_status = models.CharField(
        max_length=16, blank=True, help_text="The instance's status as the cloud reports it."
    )
    cloud_status_at = models.DateTimeField(
        null=True, blank=True, help_text="When the cloud status last changed."
    )
    external_ip = models.GenericIPAddressField(
        protocol="IPv4", null=True, blank=True, help_text="The address the cloud reports."
    )
    labels = models.JSONField(default=dict, blank=True, help_text="The instance's GCP labels.")
    synced_at = models.DateTimeField(null=True, blank=True)
    agent_token_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the node agent's token."
    )
    idle_alerted_at = models.DateTimeField(
        null=True, blank=True, help_text="When the group was last told the node sits idle."
    )
    os_login = models.BooleanField(
        default=False,
        help_text="OS Login is on for the instance (as the cloud last said): people log in "
        "with their Google identity's POSIX username, not the course's.",
    )

    class Meta:
        ordering = ("course_id", "name")
        constraints = [
            models.UniqueConstraint(fields=["course", "name"], name="node_name_unique"),
            models.UniqueConstraint(
                fields=["course", "internal_ip"], name="node_internal_ip_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def local_ssd_gb(self) -> int:
        """The Local SSD its machine type comes with (what a stop may keep or discard)."""
        from apps.compute.localssd import bundled_gb

        return bundled_gb(self.machine_type)

    @property
    def region(self) -> str:
        return self.zone.rsplit("-", 1)[0]


class StaticIP(models.Model):
    class Status(models.TextChoices):
        RESERVED = "reserved", "Reserved"
        IN_USE = "in_use", "In use"
        RELEASED = "released", "Released"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="static_ips")
    address = models.GenericIPAddressField(protocol="IPv4", unique=True)
    resource_name = models.CharField(max_length=63, help_text="GCP address resource name.")
    region = models.CharField(max_length=40, help_text="e.g. us-central1")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RESERVED)

    class Meta:
        ordering = ("course_id", "address")
        verbose_name = "static IP"

    def __str__(self) -> str:
        return self.address


class Allocation(models.Model):
    """A group holding a node and a static IP from `started_at` until `ended_at` (open = now).

    Partial unique indexes hold "one active allocation per group, per node and per IP", so no
    concurrent request can double-assign; history is every closed row.
    """

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="allocations")
    group = models.ForeignKey("groups.Group", on_delete=models.PROTECT, related_name="allocations")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="allocations")
    static_ip = models.ForeignKey(StaticIP, on_delete=models.PROTECT, related_name="allocations")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("course_id", "-started_at")
        constraints = [
            models.UniqueConstraint(
                fields=["group"],
                condition=models.Q(ended_at__isnull=True),
                name="one_node_per_group",
            ),
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(ended_at__isnull=True),
                name="one_group_per_node",
            ),
            models.UniqueConstraint(
                fields=["static_ip"],
                condition=models.Q(ended_at__isnull=True),
                name="one_group_per_ip",
            ),
            models.CheckConstraint(
                condition=models.Q(ended_at__isnull=True)
                | models.Q(ended_at__gte=models.F("started_at")),
                name="allocation_ends_after_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group} → {self.node} / {self.static_ip}"


class SharingWindow(models.Model):
    """A group's request to use other groups' nodes with its own for [starts_at, ends_at).

    Approved when every other owning group (any member) has approved its node, or staff approve
    the whole window. No two approved windows may use one node at overlapping times: on
    PostgreSQL an exclusion constraint on `WindowNode` (migration 0005) holds it.
    """

    class Status(models.TextChoices):
        REQUESTED = "requested", "Requested"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined"
        CANCELLED = "cancelled", "Cancelled"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="sharing_windows")
    requester = models.ForeignKey(
        "groups.Group", on_delete=models.PROTECT, related_name="window_requests"
    )
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    purpose = models.CharField(
        max_length=300, blank=True, help_text="What the run is for, shown to the other groups."
    )
    master_port = models.PositiveIntegerField(
        default=29500, help_text="Rendezvous port for torchrun."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REQUESTED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    note = models.CharField(
        max_length=300, blank=True, help_text="Why it was declined or cancelled."
    )

    class Meta:
        ordering = ("course_id", "starts_at")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")),
                name="window_ends_after_start",
            ),
        ]

    def __str__(self) -> str:
        return f"window #{self.pk} ({self.requester})"


class WindowNode(models.Model):
    """One node in a window. `starts_at`/`ends_at` repeat the window's so the database can
    compare intervals per node; `active` is true while the window is approved."""

    window = models.ForeignKey(SharingWindow, on_delete=models.CASCADE, related_name="nodes")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="window_uses")
    owner = models.ForeignKey(
        "groups.Group",
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The group holding the node when requested.",
    )
    rank = models.PositiveSmallIntegerField(help_text="NODE_RANK; the requester's own node is 0.")
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    active = models.BooleanField(default=False)

    class Meta:
        ordering = ("window_id", "rank")
        constraints = [
            models.UniqueConstraint(fields=["window", "node"], name="window_node_once"),
            models.UniqueConstraint(fields=["window", "rank"], name="window_rank_once"),
        ]

    def __str__(self) -> str:
        return f"{self.node} in {self.window}"


MAX_LOG_BYTES = 1024 * 1024


class Incident(models.Model):
    """An infrastructure problem report: which node, when, job IDs, logs (text, at most 1 MB), a
    short repro. Status moves open → acknowledged → resolved; staff add notes."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="incidents")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="incidents")
    group = models.ForeignKey(
        "groups.Group",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="incidents",
        help_text="The reporter's group; empty when staff report.",
    )
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    occurred_at = models.DateTimeField(help_text="When it happened (course time).")
    summary = models.CharField(max_length=200, help_text="One line: what went wrong.")
    job_ids = models.CharField(
        max_length=500, blank=True, help_text="Job or run IDs, comma separated."
    )
    logs = models.TextField(blank=True, help_text="Relevant log lines (at most 1 MB).")
    repro = models.TextField(blank=True, help_text="A short way to reproduce it.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    staff_notes = models.TextField(blank=True)
    course_wide = models.BooleanField(
        default=False,
        help_text="Shown to every student of the course (summary, node, status and staff notes; "
        "never the logs, job IDs or repro).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at",)
        indexes = [models.Index(fields=["course", "status"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.node}: {self.summary}"


class IncidentAffected(models.Model):
    """“Affects us too”: another group saying a course-wide incident hits it as well."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="affected")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    said_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    said_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("incident_id", "said_at")
        constraints = [
            models.UniqueConstraint(fields=["incident", "group"], name="incident_affected_once")
        ]

    def __str__(self) -> str:
        return f"incident {self.incident_id} affects group {self.group_id}"


class ComputePolicy(models.Model):
    """The course file's compute rules (`compute:`): allocation at the group-formation deadline
    and whether a sharing window needs a run record before its access files are given out.
    `formation_run_at` is set once the formation allocation ran, so it runs once per course."""

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="compute_policy")
    allocate_at_formation = models.BooleanField(
        default=True,
        help_text="At the formation deadline, give every group of at least the minimum size a "
        "node and an IP and e-mail it its SSH line.",
    )
    formation_milestone = models.CharField(
        max_length=50,
        default="group-formation",
        help_text="The milestone whose deadline is the group-formation deadline.",
    )
    formation_run_at = models.DateTimeField(null=True, blank=True)
    windows_need_run_record = models.BooleanField(
        default=False,
        help_text="A sharing window's access files are given out only once a run record names "
        "the window.",
    )
    gcp_project = models.CharField(max_length=63, blank=True, help_text="The GCP project ID.")
    price_per_node_hour = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="US dollars one running node costs per hour (0: not tracked).",
    )
    credit_budget = models.DecimalField(
        max_digits=12, decimal_places=2, default=0, help_text="The course's credits in US dollars."
    )
    budget_alerted_pct = models.PositiveSmallIntegerField(
        default=0, help_text="The highest budget threshold (50, 80, 100) staff were e-mailed at."
    )
    idle_below_pct = models.PositiveSmallIntegerField(
        default=5, help_text="A node whose GPUs stay under this utilisation (%) is idle."
    )
    idle_hours = models.PositiveSmallIntegerField(
        default=6, help_text="Hours of idle samples before the group and staff are e-mailed."
    )
    idle_stop = models.BooleanField(
        default=False, help_text="Stop a node once it has been idle for `idle_hours`."
    )
    groups_may_power = models.BooleanField(
        default=False, help_text="The group holding a node may start and stop it."
    )

    def __str__(self) -> str:
        return f"compute policy of {self.course_id}"


MAX_CONFIG_BYTES = 256 * 1024


class RunRecord(models.Model):
    """A run a group made, kept so it can be reproduced (the syllabus: versioned code, pinned
    configs, logged seeds, saved artifacts). The configuration's SHA-256 is computed on save;
    records stay with the group's history when it ends, and move with it on a merge."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="run_records")
    group = models.ForeignKey("groups.Group", on_delete=models.PROTECT, related_name="run_records")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    title = models.CharField(
        max_length=120, help_text="A name for the run, e.g. “2-node FSDP, bs 512”."
    )
    repository = models.CharField(
        max_length=300, help_text="Where the code lives, e.g. https://github.com/team/project."
    )
    commit = models.CharField(
        max_length=40, help_text="The commit the run used: 7 to 40 hexadecimal characters."
    )
    config_text = models.TextField(
        blank=True, help_text="The run's configuration (YAML, JSON, flags), at most 256 KB."
    )
    config_sha256 = models.CharField(max_length=64, blank=True)
    seed = models.BigIntegerField(null=True, blank=True, help_text="The random seed logged.")
    artifacts = models.CharField(
        max_length=500, blank=True, help_text="Where checkpoints and logs were saved (gs://…)."
    )
    nodes = models.CharField(max_length=300, blank=True, help_text="The nodes the run used.")
    window = models.ForeignKey(
        SharingWindow,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="run_records",
        help_text="The sharing window the run belongs to, if any.",
    )
    notes = models.TextField(blank=True, help_text="Anything else needed to rerun it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("course_id", "-created_at")
        indexes = [models.Index(fields=["course", "group", "-created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(commit__regex=r"^[0-9a-f]{7,40}$"), name="run_commit_hex"
            )
        ]

    def __str__(self) -> str:
        return f"run #{self.pk} {self.title}"


class NodeMove(models.Model):
    """A group whose node failed asks to move to a spare one; staff approve (the group keeps its
    static IP, so its SSH address stays) or decline with a reason. One open request per group."""

    class Status(models.TextChoices):
        REQUESTED = "requested", "Requested"
        DONE = "done", "Moved"
        DECLINED = "declined", "Declined"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="node_moves")
    group = models.ForeignKey("groups.Group", on_delete=models.PROTECT, related_name="node_moves")
    from_node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="+")
    to_node = models.ForeignKey(
        Node, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.REQUESTED)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=300, blank=True, help_text="Why it was declined.")

    class Meta:
        ordering = ("course_id", "-requested_at")
        constraints = [
            models.UniqueConstraint(
                fields=["group"],
                condition=models.Q(status="requested"),
                name="one_open_node_move_per_group",
            )
        ]

    def __str__(self) -> str:
        return f"move {self.group_id} off {self.from_node_id}"


class SshKey(models.Model):
    """A person's SSH public key (what node access will put in an instance's `ssh-keys`).
    One key belongs to one person: its fingerprint is unique."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=40, help_text="ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa …")
    bits = models.PositiveIntegerField(help_text="The key's size in bits.")
    fingerprint = models.CharField(
        max_length=80, unique=True, help_text="SHA256:… as ssh-keygen -l shows it."
    )
    public_key = models.TextField(help_text="The key as one line: type, base64 body (no comment).")
    label = models.CharField(
        max_length=80, blank=True, help_text="Which machine it is, e.g. laptop."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at", "pk")

    def __str__(self) -> str:
        return f"{self.kind} {self.fingerprint}"


class NodeStatusChange(models.Model):
    """The cloud status of a node from `at` until the next row: the GPU-hours and the budget
    are computed from these intervals (RUNNING counts; everything else does not)."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="status_changes")
    status = models.CharField(max_length=16)
    at = models.DateTimeField()

    class Meta:
        ordering = ("node_id", "at")
        indexes = [models.Index(fields=["node", "at"])]

    def __str__(self) -> str:
        return f"{self.node_id} {self.status} at {self.at:%Y-%m-%d %H:%M}"


class GpuSample(models.Model):
    """One reading the node agent posted: mean and max GPU utilisation and memory used."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="gpu_samples")
    at = models.DateTimeField()
    util_mean = models.FloatField(help_text="Mean utilisation over the node's GPUs, percent.")
    util_max = models.FloatField(help_text="The busiest GPU's utilisation, percent.")
    mem_used_mib = models.PositiveIntegerField(help_text="GPU memory in use, summed, MiB.")
    gpus = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ("node_id", "at")
        indexes = [models.Index(fields=["node", "at"])]

    def __str__(self) -> str:
        return f"{self.node_id} {self.util_mean:.0f}% at {self.at:%H:%M}"


class CloudOp(models.Model):
    """One cloud job: make a node's keys and address match the board (`node`), make the
    course's window firewall rules match (`rules`), or start/stop a node. What it intends is
    computed when it runs, so running it twice is harmless; `calls` is what it asked the cloud
    and what the cloud answered. At most one queued op per (kind, node): changes coalesce."""

    class Kind(models.TextChoices):
        NODE = "node", "Keys and address"
        RULES = "rules", "Window firewall rules"
        START = "start", "Start node"
        STOP = "stop", "Stop node"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="cloud_ops")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    node = models.ForeignKey(
        Node, null=True, blank=True, on_delete=models.CASCADE, related_name="cloud_ops"
    )
    target = models.CharField(max_length=40, help_text="kind:node, e.g. node:3 or rules.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    why = models.CharField(max_length=500, blank=True, help_text="What asked for it.")
    attempts = models.PositiveSmallIntegerField(default=0)
    not_before = models.DateTimeField(null=True, blank=True, help_text="Backoff: retry after.")
    lease_until = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True, help_text="Why it failed.")
    calls = models.JSONField(default=list, blank=True)
    provider = models.CharField(max_length=16, blank=True)
    discard_local_ssd = models.BooleanField(
        default=False,
        help_text="A stop: discard the node's Local SSD data (staff's choice), not keep it.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("course_id", "-created_at")
        indexes = [models.Index(fields=["course", "status", "-created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "target"],
                condition=models.Q(status="queued"),
                name="one_queued_cloud_op",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} op #{self.pk} ({self.status})"


class DryRunProject(models.Model):
    """The dry-run provider's stand-in for a GCP project (instances, addresses, firewall rules
    as JSON), seeded from the board; every operation changes it as the cloud would."""

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="+")
    state = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"dry-run project of {self.course_id}"


# Quotas and schedules per group live in their own module (a future `usage` app's models).
from apps.compute.usage_models import (  # noqa: E402, F401
    AutoStop,
    GroupQuota,
    NodeSilence,
    QuotaNotice,
    ShutdownNight,
    ShutdownOptOut,
    UsagePolicy,
)
