"""A similarity check of one assignment's submissions across groups, its inputs and results.

A check is made from an upload (a Gradescope export, or one folder or zip per group) that was
read and accepted whole; its files are stored as the text compared, each with its hash, and the
check carries the hash of all its inputs (`inputs_hash`), so a second upload of the same inputs
finds the finished check and shows it without computing again. A worker compares the files:
queued, then running with its progress, then done (or failed with the reason in `note`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course

DEFAULT_THRESHOLD = 0.5


class SimilarityCheck(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Comparing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    IN_PROGRESS = (Status.QUEUED, Status.RUNNING)

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    title = models.CharField(max_length=200, help_text="What was compared, e.g. “A2 code”.")
    milestone = models.ForeignKey(
        "coursecalendar.Milestone",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The milestone whose declared sources are shown beside each group.",
    )
    source = models.CharField(max_length=12, help_text="gradescope | folders")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent of pairs compared.")
    note = models.TextField(blank=True, help_text="Why the check failed.")
    warnings = models.JSONField(default=list, help_text="Files and submissions left out, why.")
    threshold = models.FloatField(
        default=DEFAULT_THRESHOLD, help_text="Pairs at or above this share are flagged."
    )
    inputs_hash = models.CharField(max_length=64, db_index=True)
    stats = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="While running: the worker holds the check until then and renews it as it "
        "works; past it, the sweeper takes the check over (queued again).",
    )
    takeovers = models.PositiveSmallIntegerField(
        default=0,
        help_text="How often a running check was taken over from a worker that stopped; the "
        "worker that claimed it stores its results only if this has not changed.",
    )

    class Meta:
        ordering = ("-created_at",)
        constraints = [
            models.UniqueConstraint(
                fields=["course", "inputs_hash"],
                condition=~models.Q(status="failed"),
                name="similarity_check_inputs_once",
            ),
            models.CheckConstraint(
                condition=models.Q(progress__lte=100), name="similarity_progress_percent"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} (#{self.pk})"


class SubmittedFile(models.Model):
    """One compared file: a group's (or the starter code's, `group` null) text and its hash."""

    check_run = models.ForeignKey(SimilarityCheck, on_delete=models.CASCADE, related_name="files")
    group = models.ForeignKey("groups.Group", null=True, on_delete=models.CASCADE, related_name="+")
    submission = models.CharField(max_length=200, help_text="The folder it came from.")
    path = models.CharField(max_length=500)
    kind = models.CharField(max_length=8, help_text="code | report | starter")
    language = models.CharField(max_length=20)
    sha256 = models.CharField(max_length=64)
    text = models.TextField()

    class Meta:
        ordering = ("check_run", "group_id", "path")

    def __str__(self) -> str:
        return f"{self.submission}/{self.path}"


class SimilarityPair(models.Model):
    """Two groups whose files match: the best file pair's share (`percent`, the larger of the
    two directions) ranks it; `files` lists every matching file pair with its highlighted
    character ranges."""

    check_run = models.ForeignKey(SimilarityCheck, on_delete=models.CASCADE, related_name="pairs")
    group_a = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    group_b = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    percent = models.FloatField()
    percent_a = models.FloatField()
    percent_b = models.FloatField()
    file_a = models.ForeignKey(SubmittedFile, on_delete=models.CASCADE, related_name="+")
    file_b = models.ForeignKey(SubmittedFile, on_delete=models.CASCADE, related_name="+")
    files = models.JSONField(
        default=list,
        help_text="[{file_a, file_b, percent_a, percent_b, slices_a, slices_b}], best first.",
    )

    class Meta:
        ordering = ("check_run", "-percent", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=["check_run", "group_a", "group_b"], name="similarity_pair_once"
            ),
            models.CheckConstraint(
                condition=~models.Q(group_a=models.F("group_b")), name="similarity_pair_across"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_a} ~ {self.group_b}: {self.percent:.0%}"
