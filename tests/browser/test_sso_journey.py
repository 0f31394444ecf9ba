"""Chromium signs on through the campus OpenID provider (a real one, its own process) and lands
on the course's Today page; a person on no roster lands on the refusal page."""

from __future__ import annotations

import pytest

from apps.core.models import Role
from tests.factories import CourseFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _campus_log_in(page, live_server, username: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Log in with your campus account").click()
    page.get_by_label("Campus user").fill(username)
    page.get_by_label("Password").fill("campus-pw")
    page.get_by_role("button", name="Sign on").click()
    page.wait_for_load_state("networkidle")


def test_chromium_signs_on_through_the_openid_provider_and_lands_on_the_course(  # type: ignore[no-untyped-def]
    page, live_server, oidc_provider
) -> None:
    course = CourseFactory(title="Scalable AI")
    ada = UserFactory(email="ada@campus.example.edu", full_name="Ada Lovelace")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    _campus_log_in(page, live_server, "ada")
    assert page.url == f"{live_server.url}/c/{course.code}/", page.url
    assert page.get_by_role("heading", name="Today", exact=True).is_visible()
    assert "Scalable AI" in page.content()


def test_chromium_shows_the_refusal_page_to_someone_on_no_roster(  # type: ignore[no-untyped-def]
    page, live_server, oidc_provider
) -> None:
    CourseFactory()
    _campus_log_in(page, live_server, "eve")
    assert "/accounts/sso/refused/" in page.url
    assert page.get_by_role("heading", name="You could not be signed on").is_visible()
    assert "eve@elsewhere.example.org" in page.content()


def test_chromium_signs_on_through_the_saml_idp_and_lands_on_the_course(  # type: ignore[no-untyped-def]
    page, live_server, saml_idp
) -> None:
    course = CourseFactory(title="Scalable AI")
    ada = UserFactory(email="ada@campus.example.edu", full_name="Ada Lovelace")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    page.goto(f"{live_server.url}/accounts/login/?next=/c/{course.code}/")
    page.get_by_role("link", name="Log in with campus SAML (Shibboleth)").click()
    page.get_by_label("Campus user").fill("ada")
    page.get_by_label("Password").fill("campus-pw")
    page.get_by_role("button", name="Sign on").click()
    page.wait_for_url(f"{live_server.url}/c/{course.code}/")
    assert page.get_by_role("heading", name="Today", exact=True).is_visible()
