"""Evidence that a project was useful outside the course (the syllabus's 10 % "impact"), and the
staff's score of it. URLs are stored as given and never fetched by the server."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.core.integrity import Declared, described_when_used
from apps.core.models import Course

KINDS = [
    ("merged-pr", "Merged pull request"),
    ("benchmark", "Released benchmark"),
    ("report", "Public technical report"),
    ("arxiv", "arXiv preprint"),
    ("other", "Other"),
]


class ImpactItem(Declared):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="impact_items")
    kind = models.CharField(max_length=12, choices=KINDS, help_text="What the evidence is.")
    url = models.URLField(max_length=500, help_text="Where to see it (never opened by the server).")
    happened_on = models.DateField(help_text="When it was merged, released or posted.")
    claim = models.CharField(
        max_length=300, help_text="One sentence: what it shows about the project."
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    score = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Staff: 0–100.")
    staff_note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("group__name", "happened_on", "pk")
        constraints = [
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__lte=100), name="impact_item_score_0_100"
            ),
            described_when_used("impact_item_declared_described"),
        ]

    def __str__(self) -> str:
        return f"{self.group} · {self.get_kind_display()}"


class GroupImpact(models.Model):
    """The staff's impact score for one group (what the gradebook reads)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.OneToOneField(
        "groups.Group", on_delete=models.CASCADE, related_name="impact_score"
    )
    percent = models.DecimalField(max_digits=5, decimal_places=2)
    note = models.CharField(max_length=300, blank=True)
    scored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(percent__gte=0, percent__lte=100), name="group_impact_0_100"
            )
        ]

    def __str__(self) -> str:
        return f"{self.group}: {self.percent}"


class ImpactScoreGiven(models.Model):
    """Every impact score given to a group (None: cleared), in order. `GroupImpact` is the
    latest; the gradebook reads this history, so a student who moves on keeps the score their
    group was given while they were in it, whatever the group is given later."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="+")
    percent = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True)
    given_at = models.DateTimeField(default=timezone.now)
    given_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["course", "given_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(percent__isnull=True) | Q(percent__gte=0, percent__lte=100),
                name="impact_given_0_100",
            )
        ]

    def __str__(self) -> str:
        return f"{self.group_id}: {self.percent} at {self.given_at:%Y-%m-%d %H:%M}"
