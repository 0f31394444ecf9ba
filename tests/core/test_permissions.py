from __future__ import annotations

import pytest

from apps.core.models import Role
from apps.core.permissions import is_instructor, is_member, is_staff, is_student, role_in
from tests.factories import CourseFactory, MembershipFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("role", "staff", "instructor", "student"),
    [
        (Role.INSTRUCTOR, True, True, False),
        (Role.TA, True, False, False),
        (Role.STUDENT, False, False, True),
    ],
)
def test_role_helpers(role: Role, staff: bool, instructor: bool, student: bool) -> None:
    course = CourseFactory()
    user = member(course, role)
    assert role_in(user, course) == role
    assert (is_staff(user, course), is_instructor(user, course), is_student(user, course)) == (
        staff,
        instructor,
        student,
    )


def test_a_role_in_one_course_gives_nothing_in_another() -> None:
    ee, other = CourseFactory(), CourseFactory()
    ta = member(ee, Role.TA)
    assert role_in(ta, other) is None
    assert not is_member(ta, other)


def test_a_dropped_student_has_no_role() -> None:
    course = CourseFactory()
    user = UserFactory()
    MembershipFactory(user=user, course=course, role=Role.STUDENT, is_active=False)
    assert role_in(user, course) is None


def test_a_superuser_acts_as_instructor_everywhere() -> None:
    admin = UserFactory(is_superuser=True)
    assert role_in(admin, CourseFactory()) == Role.INSTRUCTOR


def test_anonymous_has_no_role() -> None:
    from django.contrib.auth.models import AnonymousUser

    assert role_in(AnonymousUser(), CourseFactory()) is None
