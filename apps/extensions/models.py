"""A student's (or, for group work, a group's) request for more time on an assignment or a
milestone, and staff's answer. An approved request *is* the extension staff grant by hand (a
DeadlineException for an assignment, the group's milestone extension), so feeds, effective
deadlines, Today and reminders follow it the same way."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Course


class ExtensionRequest(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Waiting for staff"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined"
        CLOSED = "closed", "Closed"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", help_text="Who asked."
    )
    group = models.ForeignKey(
        "groups.Group",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Set when the request is for the whole group (group work, milestones).",
    )
    assignment = models.ForeignKey(
        "coursecalendar.Assignment",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    milestone = models.ForeignKey(
        "coursecalendar.Milestone",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    days = models.PositiveSmallIntegerField(help_text="Days asked for, after the deadline.")
    reason = models.TextField(max_length=2000)
    dsp = models.BooleanField(
        default=False, help_text="A disability (DSP) accommodation beyond the standing one."
    )
    # Kept in the database like every other upload (backups hold it; any web machine serves it).
    document = models.BinaryField(null=True, blank=True, editable=False)
    document_kind = models.CharField(
        max_length=4, blank=True, help_text="pdf, png or jpg: read from the document's bytes."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    approved_days = models.PositiveSmallIntegerField(null=True, blank=True)
    auto = models.BooleanField(default=False, help_text="Approved by the course's rule.")
    comment = models.TextField(max_length=2000, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    exception = models.OneToOneField(
        "slackdays.DeadlineException",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="request",
        help_text="The extension this request's approval granted (assignments).",
    )
    relief_note = models.CharField(
        max_length=400,
        blank=True,
        help_text="The deadline's relief when asked, and why the rule did not approve it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at", "pk")
        indexes = [models.Index(fields=["course", "status", "created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(assignment__isnull=False, milestone__isnull=True)
                | Q(assignment__isnull=True, milestone__isnull=False, group__isnull=False),
                name="extension_request_one_target",
            ),
            models.CheckConstraint(condition=Q(days__gte=1), name="extension_request_days"),
            models.CheckConstraint(
                condition=Q(status="approved", approved_days__gte=1)
                | (~Q(status="approved") & Q(approved_days__isnull=True)),
                name="extension_request_approved_days",
            ),
            # One open request per person and deadline; for a group's, per group and deadline.
            models.UniqueConstraint(
                fields=["student", "assignment"],
                condition=Q(status="open", assignment__isnull=False),
                name="one_open_extension_request_per_assignment",
            ),
            # One open request for a whole group on one assignment: five members asking at once
            # make one request, not five (the database holds it against racing askers).
            models.UniqueConstraint(
                fields=["group", "assignment"],
                condition=Q(status="open", assignment__isnull=False, group__isnull=False),
                name="one_open_group_request_per_assignment",
            ),
            models.UniqueConstraint(
                fields=["group", "milestone"],
                condition=Q(status="open", milestone__isnull=False),
                name="one_open_extension_request_per_milestone",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.student} +{self.days} d on {self.target_name}"

    @property
    def target_name(self) -> str:
        if self.assignment_id:
            return f"{self.assignment.code} {self.assignment.title}"  # type: ignore[union-attr]
        return self.milestone.name  # type: ignore[union-attr]
