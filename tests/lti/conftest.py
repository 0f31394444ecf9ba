"""Fixtures shared by the LTI tests."""

from __future__ import annotations

import pytest

from apps.core.models import Role, User
from tests.factories import CourseFactory, MembershipFactory, UserFactory
from tests.lti.test_launch import _link


@pytest.fixture
def two_courses(live_server, lti_platform):  # type: ignore[no-untyped-def]
    """Course A, linked to LMS course canvas-42 (by prof@), with a TA and a student; course B,
    not linked to this LMS, taught by profb@; and the site's administrator."""
    a = CourseFactory(title="Scalable AI")
    MembershipFactory(
        user=UserFactory(email="prof@campus.example.edu"), course=a, role="instructor"
    )
    ta = UserFactory(email="ta-a@campus.example.edu")
    MembershipFactory(user=ta, course=a, role=Role.TA)
    b = CourseFactory(title="Other course")
    profb = UserFactory(email="profb@campus.example.edu")
    MembershipFactory(user=profb, course=b, role=Role.INSTRUCTOR)
    admin = User.objects.create_superuser(email="root@campus.example.edu", password="x" * 20)
    _link(live_server, lti_platform, a)
    return a, b, ta, profb, admin
