"""Chromium launches courseops from the test LMS (its own process, signing with its own key):
the instructor, asked to sign in, links their LMS account and then the LMS course once and lands
in it; a new learner then lands with the student role."""

from __future__ import annotations

import pytest

from apps.core.models import Membership, Role
from tests.factories import PASSWORD, CourseFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_chromium_launches_from_the_lms_as_instructor_then_learner(  # type: ignore[no-untyped-def]
    page, live_server, lti_platform
) -> None:
    course = CourseFactory(title="Scalable AI")
    prof = UserFactory(email="prof@campus.example.edu")
    MembershipFactory(user=prof, course=course, role=Role.INSTRUCTOR)
    page.goto(
        lti_platform.start_url(
            email="prof@campus.example.edu", role="Instructor", context="c-1", title="EE 290"
        )
    )
    page.wait_for_url(f"{live_server.url}/lti/account/")
    page.get_by_role("link", name="Sign in to courseops").click()
    page.get_by_label("Email").fill("prof@campus.example.edu")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/lti/account/")
    page.get_by_role("button", name="Link this LMS account").click()
    page.wait_for_url(f"{live_server.url}/lti/link/")
    page.get_by_role("button", name="Link", exact=True).click()
    page.wait_for_url(f"{live_server.url}/c/{course.code}/")
    assert page.get_by_role("heading", name="Today", exact=True).is_visible()
    page.context.clear_cookies()
    page.goto(
        lti_platform.start_url(
            email="lena@campus.example.edu", role="Learner", context="c-1", name="Lena"
        )
    )
    page.wait_for_url(f"{live_server.url}/c/{course.code}/")
    assert (
        Membership.objects.get(user__email="lena@campus.example.edu", course=course).role
        == Role.STUDENT
    )
