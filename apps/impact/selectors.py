"""Who sees which evidence: a student their own group's items; staff every group's."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.groups.models import GroupMembership
from apps.impact.models import ImpactItem


def item_list(*, user: User, course: Course) -> QuerySet[ImpactItem]:
    qs = ImpactItem.objects.filter(course=course).select_related("group", "added_by")
    if is_staff(user, course):
        return qs
    mine = GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True).values(
        "group_id"
    )
    return qs.filter(group_id__in=mine)
