"""Whom compute e-mails: the course's active staff, a group's current members."""

from __future__ import annotations

from apps.core.models import STAFF_ROLES, Membership
from apps.groups.models import GroupMembership


def staff_emails(course_id: int) -> list[str]:
    return list(
        Membership.objects.filter(
            course_id=course_id, role__in=STAFF_ROLES, is_active=True
        ).values_list("user__email", flat=True)
    )


def member_emails(group_id: int) -> list[str]:
    return list(
        GroupMembership.objects.filter(group_id=group_id, left_at__isnull=True).values_list(
            "user__email", flat=True
        )
    )
