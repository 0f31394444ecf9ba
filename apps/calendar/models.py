"""What happens when: lectures, recess days, assignments and project milestones.

Every instant is an aware UTC datetime; pages convert to the course's time zone. A date in the
course file becomes `Course.due_time` (deadlines) or `Course.release_time` (releases) local time.
"""

from __future__ import annotations

from django.db import models

from apps.core.models import Course


class Lecture(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lectures")
    number = models.PositiveSmallIntegerField(help_text="L1, L2, … in syllabus order.")
    title = models.CharField(max_length=200)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    is_guest = models.BooleanField(default=False, help_text="Given by a guest speaker.")
    part = models.CharField(max_length=120, blank=True, help_text="Syllabus part, e.g. Part 1.")
    notes = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ("course", "starts_at", "number")
        constraints = [
            models.UniqueConstraint(fields=["course", "number"], name="lecture_number_unique"),
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="lecture_ends_after"
            ),
        ]

    def __str__(self) -> str:
        return f"L{self.number}. {self.title}"


class RecessDay(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="recess_days")
    date = models.DateField()
    note = models.CharField(max_length=120, default="No class")

    class Meta:
        ordering = ("course", "date")
        constraints = [models.UniqueConstraint(fields=["course", "date"], name="recess_unique")]

    def __str__(self) -> str:
        return f"{self.date}: {self.note}"


class Assignment(models.Model):
    """A group assignment (A1–A5). Slack days and exceptions move its deadline per student."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    code = models.CharField(max_length=16, help_text="Short code, e.g. A1.")
    title = models.CharField(max_length=200)
    release_at = models.DateTimeField()
    due_at = models.DateTimeField(help_text="Base deadline, before slack days and exceptions.")
    accepts_slack = models.BooleanField(default=True)

    class Meta:
        ordering = ("course", "due_at", "code")
        constraints = [
            models.UniqueConstraint(fields=["course", "code"], name="assignment_code_unique"),
            models.CheckConstraint(
                condition=models.Q(due_at__gt=models.F("release_at")),
                name="assignment_due_after_release",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.title}"


class Milestone(models.Model):
    """A project milestone from the syllabus table. Slack days never apply to milestones."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="milestones")
    key = models.SlugField(max_length=60, help_text="Stable identifier, e.g. group-formation.")
    name = models.CharField(max_length=200)
    due_at = models.DateTimeField()
    notes = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("course", "due_at", "key")
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="milestone_key_unique")
        ]

    def __str__(self) -> str:
        return self.name
