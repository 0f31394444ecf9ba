"""The onboarding questionnaire (released in the first lecture, answers editable until its
deadline), staff's enrollment decisions, and suggested groups waiting for staff to accept them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course

KINDS = [
    ("single", "One choice"),
    ("multiple", "Several choices"),
    ("scale", "Scale 1–5"),
    ("text", "Free text"),
    ("teammates", "Preferred teammates (e-mails)"),
]
DECISIONS = [("admitted", "Admitted"), ("waitlisted", "Waitlisted"), ("declined", "Declined")]


class Questionnaire(models.Model):
    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="questionnaire")
    title = models.CharField(max_length=200, default="Onboarding questionnaire")
    intro = models.TextField(blank=True, help_text="Shown above the questions.")
    opens_at = models.DateTimeField(help_text="Students can answer from then (the first lecture).")
    closes_at = models.DateTimeField(help_text="Answers can be changed until then.")

    def __str__(self) -> str:
        return f"{self.course.code}: {self.title}"


class Question(models.Model):
    questionnaire = models.ForeignKey(
        Questionnaire, on_delete=models.CASCADE, related_name="questions"
    )
    key = models.SlugField(max_length=40, help_text="Stable name, e.g. interests.")
    position = models.PositiveSmallIntegerField(default=0)
    kind = models.CharField(max_length=10, choices=KINDS)
    prompt = models.CharField(max_length=300)
    help = models.CharField(max_length=300, blank=True)
    options = models.JSONField(
        default=list, blank=True, help_text="Choices, for one or several choices."
    )
    required = models.BooleanField(default=True)
    role = models.CharField(
        max_length=12,
        blank=True,
        default="",
        help_text="interests or teammates: what group suggestions read from this question.",
    )

    class Meta:
        ordering = ("position", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=["questionnaire", "key"], name="questionnaire_question_key_unique"
            )
        ]

    def __str__(self) -> str:
        return self.prompt


class QuestionnaireResponse(models.Model):
    questionnaire = models.ForeignKey(
        Questionnaire, on_delete=models.CASCADE, related_name="responses"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    answers = models.JSONField(default=dict)
    submitted_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["questionnaire", "student"], name="one_response_per_student"
            )
        ]

    def __str__(self) -> str:
        return f"{self.student_id} → {self.questionnaire_id}"


class EnrollmentDecision(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=DECISIONS)
    note = models.CharField(
        max_length=300, blank=True, help_text="Sent to the student with the decision."
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "student"], name="one_decision_per_student")
        ]

    def __str__(self) -> str:
        return f"{self.student_id}: {self.decision}"


class GroupSuggestion(models.Model):
    """Groups proposed by the matcher, which staff may edit and then accept (only then do groups
    change). A large pool is computed by a worker: the row exists from the request on, queued,
    then running with its progress, then done (or failed with the reason). Accepting a large
    one is a worker's job too: accepting, then done with `accepted_at` (or done again with the
    reason in `note`, nothing changed)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Computing"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"
        ACCEPTING = "accepting", "Being accepted"

    IN_PROGRESS = (Status.QUEUED, Status.RUNNING)  # being computed
    BUSY = (Status.QUEUED, Status.RUNNING, Status.ACCEPTING)  # a worker has it

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    seed = models.IntegerField(default=0)
    groups = models.JSONField(default=list, help_text="[[user id, …], …]")
    stats = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DONE)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent computed.")
    note = models.TextField(
        blank=True, help_text="Why computing it failed, or why accepting it did not happen."
    )
    pool_key = models.CharField(
        max_length=64,
        blank=True,
        help_text="Hash of who waited for a group (and with whom) when it was computed; a "
        "different hash now means someone's group changed since.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)
        constraints = [
            models.UniqueConstraint(
                fields=["course"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_suggestion_in_progress_per_course",
            )
        ]

    def __str__(self) -> str:
        return f"suggestion #{self.pk} ({len(self.groups)} groups)"
