"""Peer review: a round over a report milestone, its pairing of groups, and each structured review
(scores on the syllabus's criteria, written comments) with a version for safe concurrent edits."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from apps.calendar.models import Milestone
from apps.core.integrity import Declared, described_when_used
from apps.core.models import Course

CRITERIA = (
    ("clarity", "Clarity of hypothesis"),
    ("depth", "Technical depth"),
    ("correctness", "Correctness"),
    ("rigour", "Experimental rigour"),
    ("artifact", "Quality of the artifact"),
)
RECOMMENDATIONS = (
    ("strong", "Strong: ready as is"),
    ("good", "Good: minor revisions"),
    ("fair", "Fair: major revisions"),
    ("weak", "Weak: needs rethinking"),
)


class PeerRound(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="peer_rounds")
    title = models.CharField(max_length=120, default="Peer review of the draft report")
    milestone = models.ForeignKey(
        Milestone,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The report milestone whose drafts are reviewed.",
    )
    due_at = models.DateTimeField(
        help_text="Reviews are due, and released to the reviewed groups, at this time."
    )
    k = models.PositiveSmallIntegerField(
        default=1, help_text="Groups each group reviews (and is reviewed by)."
    )
    show_reviewers = models.BooleanField(
        default=False, help_text="Tell reviewed groups who reviewed them."
    )
    seed = models.IntegerField(default=0)
    proposal = models.JSONField(
        default=list, blank=True
    )  # [[reviewer, reviewee], ...] before publishing
    proposal_reasons = models.JSONField(default=list, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("due_at", "pk")

    def __str__(self) -> str:
        return self.title


class PeerAvoid(models.Model):
    """Two groups that must not review each other (a shared project, a node-sharing partnership)."""

    round = models.ForeignKey(PeerRound, on_delete=models.CASCADE, related_name="avoids")
    group_a = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    group_b = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "group_a", "group_b"], name="peer_avoid_once"),
            models.CheckConstraint(
                condition=Q(group_a__lt=F("group_b")), name="peer_avoid_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_a} × {self.group_b}"


class PeerExclusion(models.Model):
    round = models.ForeignKey(PeerRound, on_delete=models.CASCADE, related_name="exclusions")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "group"], name="peer_exclusion_once")
        ]

    def __str__(self) -> str:
        return f"{self.group} left out"


class PeerAssignment(models.Model):
    round = models.ForeignKey(PeerRound, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        "groups.Group", on_delete=models.CASCADE, related_name="peer_reviews_given"
    )
    reviewee = models.ForeignKey(
        "groups.Group", on_delete=models.CASCADE, related_name="peer_reviews_received"
    )

    class Meta:
        ordering = ("round_id", "reviewer__name")
        constraints = [
            models.UniqueConstraint(
                fields=["round", "reviewer", "reviewee"], name="peer_assignment_once"
            ),
            models.CheckConstraint(
                condition=~Q(reviewer=F("reviewee")), name="peer_no_self_review"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} → {self.reviewee}"


def _score() -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )


class PeerReview(Declared):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"

    assignment = models.OneToOneField(
        PeerAssignment, on_delete=models.CASCADE, related_name="review"
    )
    clarity = _score()
    depth = _score()
    correctness = _score()
    rigour = _score()
    artifact = _score()
    strengths = models.TextField(blank=True)
    weaknesses = models.TextField(blank=True)
    suggestions = models.TextField(blank=True)
    recommendation = models.CharField(max_length=10, choices=RECOMMENDATIONS, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    version = models.PositiveIntegerField(
        default=0, help_text="Grows with every save; a stale save is refused."
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status="draft")
                | Q(
                    clarity__isnull=False,
                    depth__isnull=False,
                    correctness__isnull=False,
                    rigour__isnull=False,
                    artifact__isnull=False,
                ),
                name="peer_submitted_review_is_scored",
            ),
            # A "yes" to the integrity question is described (submitting needs an answer: the
            # service; rows submitted before the question existed stay valid).
            described_when_used("peer_review_declared"),
        ]

    def __str__(self) -> str:
        return f"Review {self.assignment}"

    def scores(self) -> dict[str, int | None]:
        return {key: getattr(self, key) for key, _ in CRITERIA}
