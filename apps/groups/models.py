"""Project groups of 4–6 students. The foundation holds the data; issue #3 adds the workflows."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from apps.core.models import Course

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I look-alikes


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(8))


class Group(models.Model):
    """A project group. Dissolved groups keep their rows (and membership history) but leave
    every list, and their name is free again."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(
        max_length=80, help_text="Unique (ignoring case) among the course's groups."
    )
    join_code = models.CharField(max_length=12, unique=True, default=new_join_code)
    created_at = models.DateTimeField(auto_now_add=True)
    dissolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("course_id", "name")
        constraints = [
            models.UniqueConstraint(
                "course",
                Lower("name"),
                condition=models.Q(dissolved_at__isnull=True),
                name="group_name_unique_live",
            )
        ]

    def __str__(self) -> str:
        return self.name


class GroupMembership(models.Model):
    """A student's time in a group. `left_at` is set on leaving; rows are never deleted.

    `course` repeats `group.course` so the database can hold "one active group per student per
    course" as a partial unique index.
    """

    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="memberships")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="group_memberships"
    )
    joined_at = models.DateTimeField(default=timezone.now)
    left_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("group_id", "joined_at")
        # The staff board's newest changes of one course, read without the other courses.
        indexes = [models.Index(fields=["course", "-joined_at"], name="groupmember_course_recent")]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "user"],
                condition=models.Q(left_at__isnull=True),
                name="one_active_group_per_student",
            ),
            models.CheckConstraint(
                condition=models.Q(left_at__isnull=True)
                | models.Q(left_at__gte=models.F("joined_at")),
                name="membership_left_after_joined",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.group}"
