"""Reads scoped to what the user may see."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from apps.core.compiled import compiled_query
from apps.core.models import Course, Membership, User
from apps.core.permissions import remember_role


def course_list(*, user: User) -> QuerySet[Course]:
    """Courses the user belongs to (active membership); every course for a superuser."""
    qs = Course.objects.all()
    if not user.is_superuser:
        qs = qs.filter(memberships__user=user, memberships__is_active=True)
    return qs.order_by("-term", "code").distinct()


def _membership_with_course(user_id: int, code: str) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user_id=user_id, is_active=True, course__code=code)
        .select_related("course")
        .order_by("pk")[:1]  # not the default (by name), which joins the users table
    )


def course_get(*, user: User, code: str) -> Course:
    """The course with this code, if the user may see it; 404 otherwise (no existence leak).
    One query (its SQL built once per process, `compiled_query`): the membership with its
    course, which also primes the request's role cache (`permissions.role_in`), so the page's
    role checks cost nothing more."""
    if user.is_superuser:
        course = Course.objects.filter(code=code).first()
    else:
        found = compiled_query("core.course_get", _membership_with_course, user.pk, code)
        membership = found[0] if found else None
        course = membership.course if membership else None
        if membership is not None:
            remember_role(user, membership.course_id, membership.role)
    if course is None:
        raise Http404("No such course, or you are not a member of it.")
    return course


def membership_list(*, user: User) -> QuerySet[Membership]:
    return memberships_of(user.pk)


def memberships_of(user_id: int) -> QuerySet[Membership]:
    """A user's active memberships with their courses, newest term first (by id: a
    `compiled_query` builder can call it)."""
    return (
        Membership.objects.filter(user_id=user_id, is_active=True)
        .select_related("course")
        .order_by("-course__term", "course__code")
    )
