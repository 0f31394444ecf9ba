"""Quotas and schedules per group: the course file's usage rules, staff's per-group quota, the
notices a group got, the nights' shutdowns, opt-out requests, the stops courseops made on its
own, and spells of a running node's silence. Imported by `apps.compute.models` (so Django
registers them under `compute`); kept apart so they move with a future `usage` app."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class UsagePolicy(models.Model):
    """The course file's `compute.gpu_hour_quota` and `compute.scheduled_shutdown`."""

    class Period(models.TextChoices):
        WEEK = "week", "Week (Monday 00:00, course time)"
        TERM = "term", "Term"

    class Approval(models.TextChoices):
        STAFF = "staff", "Staff approve each request"
        AUTO = "auto", "Approved as asked"

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="usage_policy")
    gpu_hours = models.PositiveIntegerField(
        default=0, help_text="GPU-hours each group may use per period (0: no quota)."
    )
    period = models.CharField(max_length=8, choices=Period.choices, default=Period.WEEK)
    warn_pct = models.PositiveSmallIntegerField(
        default=80, help_text="Warn a group when it has used this share of its quota (%)."
    )
    shutdown_at = models.TimeField(
        null=True, blank=True, help_text="Every night's shutdown, course time (empty: none)."
    )
    opt_out_approval = models.CharField(
        max_length=8, choices=Approval.choices, default=Approval.STAFF
    )

    def __str__(self) -> str:
        return f"usage policy of {self.course_id}"


class GroupQuota(models.Model):
    """Staff's own GPU-hour quota for one group, in place of the course file's."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.OneToOneField("groups.Group", on_delete=models.CASCADE, related_name="+")
    gpu_hours = models.PositiveIntegerField(help_text="GPU-hours per period for this group.")
    note = models.CharField(max_length=300, help_text="Why staff set it.")
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.group_id}: {self.gpu_hours} GPU-hours"


class QuotaNotice(models.Model):
    """A group was warned (`warn`) or its node stopped (`stop`) in one quota period at one
    quota: the unique row makes each e-mail go once, and raising the quota arms them again."""

    class Kind(models.TextChoices):
        WARN = "warn", "Warned"
        STOP = "stop", "Stopped"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    period_start = models.DateTimeField()
    kind = models.CharField(max_length=4, choices=Kind.choices)
    quota = models.PositiveIntegerField()
    used = models.FloatField(help_text="GPU-hours used when it was sent.")
    at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["group", "period_start", "kind", "quota"], name="one_quota_notice"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.group_id} {self.used:.0f}/{self.quota}"


class ShutdownNight(models.Model):
    """The shutdown of one night was made (claimed by its unique row: a second beat, or a
    second run, makes none)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    night = models.DateField(help_text="The date of the shutdown, course time.")
    at = models.DateTimeField()
    stopped = models.JSONField(default=list, help_text="The nodes it stopped.")
    kept = models.JSONField(default=list, help_text="The nodes an approved opt-out kept running.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "night"], name="one_shutdown_per_night")
        ]

    def __str__(self) -> str:
        return f"shutdown {self.course_id} {self.night}"


class ShutdownOptOut(models.Model):
    """A group asks to keep its node running through one night's shutdown."""

    class Status(models.TextChoices):
        REQUESTED = "requested", "Awaiting staff"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    night = models.DateField(help_text="The date of the shutdown to skip, course time.")
    reason = models.CharField(max_length=300, help_text="What has to keep running, and why.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.REQUESTED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=300, blank=True, help_text="Staff's answer.")

    class Meta:
        ordering = ("-night", "-pk")
        constraints = [
            models.UniqueConstraint(
                fields=["group", "night"],
                condition=models.Q(status__in=["requested", "approved"]),
                name="one_live_opt_out_per_night",
            )
        ]

    def __str__(self) -> str:
        return f"opt-out {self.group_id} {self.night} ({self.status})"


class AutoStop(models.Model):
    """A stop courseops made on its own (quota used up, the nightly shutdown): the cloud job
    that does it and, written in the same transaction, its audit row."""

    class Cause(models.TextChoices):
        QUOTA = "quota", "GPU-hour quota used"
        SCHEDULE = "schedule", "Nightly shutdown"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    node = models.ForeignKey("compute.Node", on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey(
        "groups.Group", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    op = models.ForeignKey("compute.CloudOp", on_delete=models.CASCADE, related_name="+")
    cause = models.CharField(max_length=8, choices=Cause.choices)
    detail = models.CharField(max_length=300)
    at = models.DateTimeField()

    class Meta:
        ordering = ("-at",)

    def __str__(self) -> str:
        return f"{self.cause} stop of {self.node_id} (job {self.op_id})"


class NodeSilence(models.Model):
    """A RUNNING node sent no sample from `since` on: its activity is unknown. One open spell
    per node (database constraint), so its group and staff are e-mailed once per spell."""

    node = models.ForeignKey("compute.Node", on_delete=models.CASCADE, related_name="+")
    since = models.DateTimeField(help_text="The last sample (or the start) before the silence.")
    noticed_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["node"], condition=models.Q(ended_at__isnull=True), name="one_open_silence"
            )
        ]

    def __str__(self) -> str:
        return f"{self.node_id} silent since {self.since:%Y-%m-%d %H:%M}"
