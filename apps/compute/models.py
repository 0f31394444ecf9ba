"""GPU nodes and static external IPs. The foundation holds the inventory; issue #4 allocates."""

from __future__ import annotations

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
        ordering = ("course", "name")
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
        ordering = ("course", "address")
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
        ordering = ("course", "-started_at")
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
