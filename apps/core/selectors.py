"""Reads scoped to what the user may see."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from apps.core.models import Course, Membership, User
from apps.core.permissions import remember_role


def course_list(*, user: User) -> QuerySet[Course]:
    """Courses the user belongs to (active membership); every course for a superuser."""
    qs = Course.objects.all()
    if not user.is_superuser:
        qs = qs.filter(memberships__user=user, memberships__is_active=True)
    return qs.order_by("-term", "code").distinct()


def course_get(*, user: User, code: str) -> Course:
    """The course with this code, if the user may see it; 404 otherwise (no existence leak).
    One query: the membership with its course, which also primes the request's role cache
    (`permissions.role_in`), so the page's role checks cost nothing more."""
    if user.is_superuser:
        course = Course.objects.filter(code=code).first()
    else:
        membership = (
            Membership.objects.filter(user=user, is_active=True, course__code=code)
            .select_related("course")
            .order_by("pk")  # not the default (by name), which joins the users table
            .first()
        )
        course = membership.course if membership else None
        if membership is not None:
            remember_role(user, membership.course_id, membership.role)
    if course is None:
        raise Http404("No such course, or you are not a member of it.")
    return course


def membership_list(*, user: User) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user=user, is_active=True)
        .select_related("course")
        .order_by("-course__term", "course__code")
    )
