"""Scribe duties: which lectures need scribes, students' preferences, the staff's solved and
published assignment, each duty's notes and review, and swaps between students."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.calendar.models import Lecture
from apps.core.models import Course

USER = settings.AUTH_USER_MODEL


class ScribePlan(models.Model):
    """The course's scribing policy and its latest solve (one row per course, created on first
    use). The proposal is a list of [student id, lecture id] until staff publish it."""

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="scribe_plan")
    per_student = models.PositiveSmallIntegerField(
        default=2, help_text="Lectures each student scribes."
    )
    min_gap_days = models.PositiveSmallIntegerField(
        default=7, help_text="Least days between a student's two lectures."
    )
    notes_due_days = models.PositiveSmallIntegerField(
        default=7, help_text="Notes are due this many days after the lecture."
    )
    max_preferences = models.PositiveSmallIntegerField(
        default=3, help_text="Lectures a student may rank as wanted."
    )
    preferences_due_at = models.DateTimeField(
        null=True, blank=True, help_text="After this, preferences are frozen."
    )
    seed = models.IntegerField(
        default=0, help_text="Same inputs and seed give the same assignment."
    )
    proposal = models.JSONField(default=list, blank=True)
    proposal_score = models.IntegerField(default=0)
    proposal_bound = models.FloatField(default=0)
    proposal_optimal = models.BooleanField(default=False)
    proposal_reasons = models.JSONField(default=list, blank=True)
    proposal_satisfied = models.JSONField(default=dict, blank=True)
    solve_status = models.CharField(
        max_length=12, default="", blank=True
    )  # "", solving, done, failed
    solved_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Scribing for {self.course}"


class ScribeLecture(models.Model):
    """Staff's choice for one lecture; a lecture without a row is eligible with a balanced load."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    lecture = models.OneToOneField(Lecture, on_delete=models.CASCADE, related_name="scribe")
    eligible = models.BooleanField(default=True)
    needed = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Scribes needed; empty = balanced."
    )

    def __str__(self) -> str:
        return f"L{self.lecture.number}: {'eligible' if self.eligible else 'no scribes'}"


class ScribePreference(models.Model):
    class Kind(models.TextChoices):
        CANNOT = "cannot", "Cannot take"
        PREFER = "prefer", "Would like"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="+")
    lecture = models.ForeignKey(Lecture, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["student", "lecture"], name="scribe_pref_once"),
            models.CheckConstraint(
                condition=Q(kind="cannot", rank__isnull=True) | Q(kind="prefer", rank__gte=1),
                name="scribe_pref_rank",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.student_id} {self.kind} {self.lecture_id}"


class ScribeGroupMode(models.Model):
    class Mode(models.TextChoices):
        SPREAD = "spread", "Spread us out (no two of us on one lecture)"
        TOGETHER = "together", "Put us together where possible"

    group = models.OneToOneField(
        "groups.Group", on_delete=models.CASCADE, related_name="scribe_mode"
    )
    mode = models.CharField(max_length=10, choices=Mode.choices)

    def __str__(self) -> str:
        return f"{self.group_id}: {self.mode}"


class ScribeDuty(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        SUBMITTED = "submitted", "Submitted"
        REVISION = "revision", "Revision requested"
        ACCEPTED = "accepted", "Accepted"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    lecture = models.ForeignKey(Lecture, on_delete=models.PROTECT, related_name="scribe_duties")
    student = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="scribe_duties")
    due_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    link = models.URLField(
        max_length=500, blank=True, help_text="The notes (a pull request, Overleaf or Docs link)."
    )
    declaration = models.TextField(blank=True, help_text="LLM or other sources used, and how.")
    submitted_at = models.DateTimeField(null=True, blank=True)
    feedback = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("lecture__starts_at", "student__full_name")
        constraints = [
            models.UniqueConstraint(fields=["lecture", "student"], name="scribe_duty_once")
        ]

    def __str__(self) -> str:
        return f"{self.student} · L{self.lecture.number}"

    def late_at(self, now: dt.datetime) -> bool:
        """Still owed (assigned, or sent back for revision) and past its due time: the page's
        "· late" and the API's `late`."""
        return self.status in (self.Status.ASSIGNED, self.Status.REVISION) and now > self.due_at


class ScribeSwap(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Waiting for an answer"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"
        CANCELLED = "cancelled", "Cancelled"
        REVERTED = "reverted", "Reverted by staff"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    duty = models.ForeignKey(ScribeDuty, on_delete=models.CASCADE, related_name="swaps_out")
    proposer = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    other = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    other_duty = models.ForeignKey(
        ScribeDuty,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="swaps_in",
        help_text="Empty: the duty is given away.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"Swap {self.pk} ({self.status})"
