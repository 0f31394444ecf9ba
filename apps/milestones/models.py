"""A group's record of one project milestone: its submission, extension and excuse.

Created on first touch (a member records a link, staff grant an extension); a group with no
row simply has not submitted. The status is derived (`rules.milestone_status`), never stored,
so moving the milestone or granting an extension re-classifies every group at once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.calendar.models import Milestone
from apps.core.integrity import Declared, described_when_used
from apps.core.models import Course


class GroupMilestone(Declared):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    milestone = models.ForeignKey(Milestone, on_delete=models.CASCADE, related_name="group_rows")
    group = models.ForeignKey("groups.Group", on_delete=models.CASCADE, related_name="milestones")
    link = models.URLField(max_length=500, blank=True, help_text="Where the submission is.")
    sources = models.TextField(
        blank=True,
        help_text="The group's sources and AI-use statement: what was used, and where in the "
        "submission.",
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    extension_hours = models.PositiveIntegerField(
        default=0, help_text="Hours added to the milestone's due time for this group."
    )
    extension_reason = models.CharField(max_length=300, blank=True)
    excused = models.BooleanField(default=False)
    excuse_reason = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("milestone__due_at", "group__name")
        constraints = [
            models.UniqueConstraint(fields=["milestone", "group"], name="group_milestone_once"),
            described_when_used("group_milestone_declared_described"),
        ]

    def __str__(self) -> str:
        return f"{self.group} · {self.milestone}"
