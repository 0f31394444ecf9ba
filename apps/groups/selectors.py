"""Reads of groups, scoped to what the user may see.

A student sees their own group in full and other groups' names and sizes only; staff see all.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce

from apps.core.compiled import compiled_query
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.groups.models import Group, GroupMembership


def current_members_prefetch() -> Prefetch:
    return Prefetch(
        "memberships",
        queryset=GroupMembership.objects.filter(left_at__isnull=True)
        .select_related("user")
        .order_by("joined_at"),
        to_attr="current_members",
    )


def group_list_with_sizes(*, course: Course) -> QuerySet[Group]:
    # Each group's size counted by its own rows (index on group): a join to every membership
    # row would make PostgreSQL scan all courses' memberships once a department shares it.
    size = (
        GroupMembership.objects.filter(group=OuterRef("pk"), left_at__isnull=True)
        .order_by()
        .values("group")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Group.objects.filter(course=course, dissolved_at__isnull=True)
        .annotate(size=Coalesce(Subquery(size), 0))
        .order_by("name")
    )


def size_of(group: Group) -> int:
    """The `size` annotation of a group from `group_list_with_sizes`."""
    return int(group.size)  # type: ignore[attr-defined]


def _current_group_ids(course_id: int, user_id: int) -> QuerySet[Any]:
    return (
        GroupMembership.objects.filter(course_id=course_id, user_id=user_id, left_at__isnull=True)
        .order_by()
        .values_list("group_id", flat=True)[:1]
    )


def current_group_id(
    *, course: Course, user: User, memo: dict[str, Any] | None = None
) -> int | None:
    """The id of the student's current group in the course, or None: one indexed query, once
    per `memo` (a request's), so the panels and calendar sources of one page share it and
    filter on `group_id = …` instead of each joining the memberships again."""
    key = f"group_id:{course.pk}:{user.pk}"
    if memo is not None and key in memo:
        return memo[key]
    ids = compiled_query("groups.current_group_id", _current_group_ids, course.pk, user.pk)
    gid = ids[0] if ids else None
    if memo is not None:
        memo[key] = gid
    return gid


def current_group_id_remember(
    memo: dict[str, Any], *, course: Course, user: User, group_id: int | None
) -> None:
    """Prime `current_group_id` from a query that already read the student's membership."""
    memo[f"group_id:{course.pk}:{user.pk}"] = group_id


def group_for_student(*, course: Course, user: User) -> Group | None:
    """The student's current group with its current members prefetched (2 queries)."""
    return (
        Group.objects.filter(
            course=course, memberships__user=user, memberships__left_at__isnull=True
        )
        .prefetch_related(current_members_prefetch())
        .first()
    )


def group_list(*, user: User, course: Course) -> QuerySet[Group]:
    """Live groups with `size` and current members prefetched (2 queries). Callers decide what
    a student may see of other groups (name and size only): see `group_visible_in_full`."""
    return group_list_with_sizes(course=course).prefetch_related(current_members_prefetch())


def group_visible_in_full(*, user: User, group: Group) -> bool:
    if is_staff(user, group.course):
        return True
    return group.memberships.filter(user=user, left_at__isnull=True).exists()


def students_without_group(*, course: Course) -> QuerySet[User]:
    # The subtraction is done on the course's memberships, so PostgreSQL reads only this
    # course's people (a filter on the user table would scan every course's users).
    grouped = GroupMembership.objects.filter(course=course, left_at__isnull=True).values("user_id")
    alone = (
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .exclude(user_id__in=grouped)
        .values("user_id")
    )
    return User.objects.filter(id__in=alone).order_by("full_name", "email")


def membership_history(*, course: Course, limit: int = 50) -> QuerySet[GroupMembership]:
    return (
        GroupMembership.objects.filter(course=course)
        .select_related("user", "group")
        .order_by("-joined_at")[:limit]
    )
