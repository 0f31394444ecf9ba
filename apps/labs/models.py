"""A student's lab record (the "Design Ledger"): per step the prediction they locked, the
instrument's last inputs and figures, and their reflection. A locked prediction never changes:
the row is created by the lock and its prediction column is never written again."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class CourseLab(models.Model):
    """A lab the course file lists, with its window (course time converted to UTC on load)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    lab_key = models.SlugField(max_length=60)
    opens_at = models.DateTimeField(help_text="Predictions can be locked from then.")
    closes_at = models.DateTimeField(help_text="Steps can be submitted until then.")

    class Meta:
        ordering = ("opens_at", "lab_key")
        constraints = [
            models.UniqueConstraint(fields=["course", "lab_key"], name="one_window_per_lab"),
            models.CheckConstraint(
                condition=models.Q(closes_at__gt=models.F("opens_at")), name="lab_closes_after"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.lab_key} in {self.course}"


class LabRecord(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    lab_key = models.SlugField(max_length=60, help_text="The lab file's key, e.g. lab09-perf-engr.")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    context = models.CharField(
        max_length=20, default="batch", help_text="The deployment context the student chose."
    )
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("lab_key", "student_id")
        constraints = [
            models.UniqueConstraint(
                fields=["course", "lab_key", "student"], name="one_lab_record_per_student"
            )
        ]

    def __str__(self) -> str:
        return f"{self.lab_key} · {self.student}"


class StepRecord(models.Model):
    record = models.ForeignKey(LabRecord, on_delete=models.CASCADE, related_name="steps")
    number = models.PositiveSmallIntegerField()
    choice = models.CharField(max_length=8, blank=True, help_text="A locked choice prediction.")
    value = models.FloatField(null=True, blank=True, help_text="A locked numeric prediction.")
    locked_at = models.DateTimeField(auto_now_add=True)
    inputs = models.JSONField(default=dict, blank=True, help_text="The instrument's last inputs.")
    figures = models.JSONField(default=dict, blank=True, help_text="What they gave.")
    ran_at = models.DateTimeField(null=True, blank=True)
    reflection_choice = models.CharField(max_length=8, blank=True)
    reflection_text = models.TextField(max_length=2000, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("record_id", "number")
        constraints = [
            # The lock: one row per student and step, so a second lock cannot slip in.
            models.UniqueConstraint(fields=["record", "number"], name="one_lock_per_step"),
            models.CheckConstraint(
                condition=(models.Q(value__isnull=True) & ~models.Q(choice=""))
                | (models.Q(value__isnull=False) & models.Q(choice="")),
                name="a_step_locks_one_prediction",
            ),
            models.CheckConstraint(
                condition=models.Q(submitted_at__isnull=True) | models.Q(ran_at__isnull=False),
                name="submitted_after_the_instrument_ran",
            ),
        ]

    def __str__(self) -> str:
        return f"step {self.number} of {self.record}"
