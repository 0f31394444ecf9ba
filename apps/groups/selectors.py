"""Reads of groups, scoped to what the user may see."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from apps.core.models import Course, Membership, Role, User
from apps.groups.models import Group, GroupMembership


def group_for_student(*, course: Course, user: User) -> Group | None:
    """The student's current group with its current members prefetched (2 queries)."""
    current = GroupMembership.objects.filter(left_at__isnull=True).select_related("user")
    return (
        Group.objects.filter(
            course=course, memberships__user=user, memberships__left_at__isnull=True
        )
        .prefetch_related(Prefetch("memberships", queryset=current, to_attr="current_members"))
        .first()
    )


def group_list_with_sizes(*, course: Course) -> QuerySet[Group]:
    return Group.objects.filter(course=course).annotate(
        size=Count("memberships", filter=Q(memberships__left_at__isnull=True))
    )


def students_without_group(*, course: Course) -> QuerySet[User]:
    grouped = GroupMembership.objects.filter(course=course, left_at__isnull=True).values("user_id")
    student_ids = Membership.objects.filter(
        course=course, role=Role.STUDENT, is_active=True
    ).values("user_id")
    return User.objects.filter(id__in=student_ids).exclude(id__in=grouped)
