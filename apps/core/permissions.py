"""Who may do what in a course. Used by pages and API alike.

A superuser acts as an instructor in every course. "Staff" means instructor or TA.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.core.models import STAFF_ROLES, Course, Membership, Role, User

AnyUser = User | AnonymousUser


def role_in(user: AnyUser, course: Course) -> Role | None:
    """The user's active role in the course, or None. Cached on the user per request."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.INSTRUCTOR
    cache: dict[int, Role | None] = user.__dict__.setdefault("_course_roles", {})
    if course.pk not in cache:
        role = (
            Membership.objects.filter(user=user, course=course, is_active=True)
            .order_by("pk")
            .values_list("role", flat=True)
            .first()
        )
        cache[course.pk] = Role(role) if role else None
    return cache[course.pk]


def remember_role(user: User, course_id: int, role: str | None) -> None:
    """Prime `role_in`'s per-request cache from a query that already read the membership."""
    user.__dict__.setdefault("_course_roles", {})[course_id] = Role(role) if role else None


def is_member(user: AnyUser, course: Course) -> bool:
    return role_in(user, course) is not None


def is_staff(user: AnyUser, course: Course) -> bool:
    return role_in(user, course) in STAFF_ROLES


def is_instructor(user: AnyUser, course: Course) -> bool:
    return role_in(user, course) == Role.INSTRUCTOR


def is_student(user: AnyUser, course: Course) -> bool:
    return role_in(user, course) == Role.STUDENT


class IsCourseMember(BasePermission):
    """Object permission for views whose object is a Course (or has `.course`)."""

    message = "You are not a member of this course."

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        course = obj if isinstance(obj, Course) else obj.course
        return is_member(request.user, course)


class IsCourseStaff(BasePermission):
    message = "Only the course's instructors and TAs may do this."

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        course = obj if isinstance(obj, Course) else obj.course
        return is_staff(request.user, course)
