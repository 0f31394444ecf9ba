"""Scores staff enter or import, and the frozen end-of-term grades.

Computed scores (autograder, scribing, checkoffs, peer review, milestones) are not stored: they
are read from their apps each time (`sources.py`), so a regrade shows at once. A `ScoreEntry`
for a student overrides everything else for that student and component; one for a group
applies to each current member who has no entry of their own, or whose own entry was only
carried from an earlier group and is older than the group's score given since they joined.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Course, GradingComponent


class ScoreEntry(models.Model):
    """One entered score: a student's or a group's, on one leaf component, in percent. At most one
    per (component, student) and one per (component, group), held by the database."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    component = models.ForeignKey(GradingComponent, on_delete=models.CASCADE, related_name="scores")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    group = models.ForeignKey(
        "groups.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    percent = models.DecimalField(max_digits=5, decimal_places=2, help_text="0–100.")
    note = models.CharField(max_length=300, blank=True)
    carried = models.BooleanField(
        default=False,
        help_text="A group's score the student kept when they left it (not a staff override): "
        "a later score given to a group while they are in it replaces it.",
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(student__isnull=True) ^ Q(group__isnull=True),
                name="score_for_student_xor_group",
            ),
            models.CheckConstraint(
                condition=Q(percent__gte=0, percent__lte=100), name="score_percent_0_100"
            ),
            models.UniqueConstraint(
                fields=["component", "student"],
                condition=Q(student__isnull=False),
                name="one_score_per_student_component",
            ),
            models.UniqueConstraint(
                fields=["component", "group"],
                condition=Q(group__isnull=False),
                name="one_score_per_group_component",
            ),
        ]
        indexes = [models.Index(fields=["course", "component"])]

    def __str__(self) -> str:
        who = f"student {self.student_id}" if self.student_id else f"group {self.group_id}"
        return f"{self.component.key} · {who}: {self.percent}"


class GradeFreeze(models.Model):
    """The course's grades frozen at the end of term: while it exists, no score, weight or
    cut-off changes; `FrozenGrade` rows hold what every student got."""

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="grade_freeze")
    frozen_at = models.DateTimeField(auto_now_add=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.course.code} frozen {self.frozen_at:%Y-%m-%d}"


class FrozenGrade(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(max_length=12)
    letter = models.CharField(max_length=3, blank=True)
    total = models.FloatField(null=True)
    reason = models.CharField(max_length=500, blank=True)
    percents = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course", "student"], name="one_frozen_grade_per_student"
            )
        ]

    def __str__(self) -> str:
        return f"{self.student_id}: {self.letter or self.status}"


class ScoreImport(models.Model):
    """An uploaded score CSV, kept from preview to commit (and afterwards, for the record)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    filename = models.CharField(max_length=200)
    content = models.BinaryField(help_text="The file as uploaded.")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    committed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    summary = models.JSONField(default=dict, blank=True)
    component_key = models.CharField(
        max_length=60,
        blank=True,
        help_text="For a Gradescope score export: the component its Total Score is for.",
    )

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.filename
