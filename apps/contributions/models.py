"""Questions students propose for the autograder bank (the syllabus's "enhancements"): proposed,
reviewed by staff, and once accepted a question of the course's contributed set, credited to its
authors."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.integrity import Declared, described_when_used
from apps.core.models import Course

STATUSES = [
    ("proposed", "Proposed"),
    ("changes", "Changes requested"),
    ("accepted", "Accepted"),
    ("rejected", "Rejected"),
]
KINDS = [
    ("numeric", "Numeric"),
    ("choice", "Multiple choice"),
    # The syllabus's other enhancement: "reframe the programmatic part" of an assignment.
    ("reframing", "Reframing of an assignment's programmatic part"),
]


class QuestionProposal(Declared):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    proposer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    group = models.ForeignKey(
        "groups.Group",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Set when the whole group proposes it (every member is credited).",
    )
    authors = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="+", help_text="Who is credited."
    )
    kind = models.CharField(max_length=10, choices=KINDS)
    assignment = models.ForeignKey(
        "coursecalendar.Assignment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Reframing: the assignment whose programmatic part it changes.",
    )
    link = models.URLField(
        max_length=500,
        blank=True,
        help_text="Reframing: the starter code or notebook (https://…; never fetched).",
    )
    prompt = models.TextField(help_text="The question; {name} shows a parameter's value.")
    params_text = models.TextField(
        blank=True, help_text="One parameter a line: n = 8, n in 8..64 step 8, n in {8, 16}."
    )
    params = models.JSONField(default=dict, blank=True)
    answer = models.CharField(
        max_length=500, blank=True, help_text="The key as a calculator expression (numeric)."
    )
    unit = models.CharField(max_length=20, blank=True)
    rel_tol = models.FloatField(default=0.02)
    options = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default="proposed")
    staff_comment = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    question = models.OneToOneField(
        "autograder.Question",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="proposal",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at",)
        constraints = [described_when_used("proposal_declared_described")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.prompt[:40]}"

    @property
    def options_text(self) -> str:
        """The options as the form writes them (the inverse of rules.options_from_text)."""
        return "\n".join(
            f"{'*' if o.get('correct') else ''}{o.get('label', '')}) {o.get('text', '')}"
            + (f" | {o['misconception']}" if o.get("misconception") else "")
            for o in self.options
        )

    @property
    def rel_tol_percent(self) -> float:
        return round(self.rel_tol * 100, 3)
