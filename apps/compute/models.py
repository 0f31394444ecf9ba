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
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at",)
        indexes = [models.Index(fields=["course", "status"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.node}: {self.summary}"
