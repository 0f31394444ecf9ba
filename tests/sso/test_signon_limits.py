"""Refused campus sign-ons are counted per identity and per address, never under a shared empty
name (django-axes counted them as password failures of the username "", so the 5th refused
stranger locked OIDC and SAML for everybody for 15 minutes). Against the real peers: the
OpenID provider (django-oauth-toolkit) and the SAML IdP (pysaml2), each in its own process."""

from __future__ import annotations

import pytest
import requests
from django.test import Client

from apps.core.models import AuditEvent, DoorCount, Role
from tests.factories import CourseFactory, MembershipFactory, UserFactory
from tests.sso.test_oidc import _sign_on
from tests.sso.test_saml import _saml_sign_on

pytestmark = pytest.mark.django_db(transaction=True)

STRANGERS = [f"stranger{i:02}" for i in range(1, 21)]


def _course_with_ada():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    return course, ada


@pytest.mark.parametrize("password_login", [True, False])
def test_a_rostered_student_signs_on_after_twenty_refused_strangers_oidc(  # type: ignore[no-untyped-def]
    live_server, oidc_provider, settings, password_login
) -> None:
    settings.PASSWORD_LOGIN = password_login
    course, ada = _course_with_ada()
    for username in STRANGERS:
        r = _sign_on(live_server, username, f"/c/{course.code}/")
        assert r.status_code == 200, (username, r.status_code)
        assert "on no course&#x27;s roster" in r.text
    assert AuditEvent.objects.filter(action="auth.sso_refused").count() == 20
    assert not DoorCount.objects.filter(key="").exists()  # nobody counted under an empty name
    r = _sign_on(live_server, "ada", f"/c/{course.code}/")
    assert r.status_code == 200
    assert r.url == f"{live_server.url}/c/{course.code}/", r.url
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 1


def test_a_rostered_student_signs_on_after_twenty_refused_strangers_saml(  # type: ignore[no-untyped-def]
    live_server, saml_idp
) -> None:
    course, ada = _course_with_ada()
    for username in STRANGERS:
        r = _saml_sign_on(live_server, username)
        assert r.status_code == 200, (username, r.status_code)
        assert "on no course&#x27;s roster" in r.text
    r = _saml_sign_on(live_server, "ada", f"/c/{course.code}/")
    assert r.url == f"{live_server.url}/c/{course.code}/", r.url
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 1


def test_one_identity_refused_again_and_again_gets_429_and_nobody_else_does(  # type: ignore[no-untyped-def]
    live_server, oidc_provider
) -> None:
    """Eve is on no roster: five refusals, then 429 with how long it holds; a stranger and a
    rostered student from the same address are unaffected. Once staff add Eve, she is in at
    once — a door stops refusals, never an admission."""
    course, _ada = _course_with_ada()
    for _ in range(5):
        r = _sign_on(live_server, "eve", "/")
        assert r.status_code == 200
        assert "on no course&#x27;s roster" in r.text
    sixth = _sign_on(live_server, "eve", "/")
    assert sixth.status_code == 429
    assert "Too many refused sign-ons" in sixth.text
    assert "try again until" in sixth.text
    assert int(sixth.headers["Retry-After"]) > 0
    other = _sign_on(live_server, "stranger01", "/")
    assert other.status_code == 200
    assert "on no course&#x27;s roster" in other.text
    assert _sign_on(live_server, "ada", f"/c/{course.code}/").url.endswith(f"/c/{course.code}/")
    eve = UserFactory(email="eve@elsewhere.example.org")
    MembershipFactory(user=eve, course=course, role=Role.STUDENT)
    assert _sign_on(live_server, "eve", f"/c/{course.code}/").url.endswith(f"/c/{course.code}/")


def test_an_address_past_its_limit_is_refused_before_the_provider_is_asked(  # type: ignore[no-untyped-def]
    live_server, oidc_provider, settings
) -> None:
    """The per-address door (generous: a lecture hall is one NAT), set low here: past it, the
    callback answers 429 without a token request; another address is not affected."""
    settings.DOOR_LIMITS = {**settings.DOOR_LIMITS, "signon-address": {"tries": 3, "window_s": 900}}
    _course_with_ada()
    for username in STRANGERS[:3]:
        assert _sign_on(live_server, username, "/").status_code == 200
    shut = _sign_on(live_server, "ada", "/")
    assert shut.status_code == 429
    assert "campus sign-on from here is paused" in shut.text
    elsewhere = Client(REMOTE_ADDR="192.0.2.7").get("/oidc/callback/?code=c&state=s")
    assert elsewhere.status_code != 429


def test_a_password_log_in_still_locks_its_own_account_only(live_server, oidc_provider) -> None:  # type: ignore[no-untyped-def]
    """The password lock-out keeps counting passwords (per account): five wrong passwords for
    Bob lock Bob, while campus sign-on stays open for everyone."""
    course, _ada = _course_with_ada()
    bob = UserFactory(email="bob@campus.example.edu")
    bob.set_password("right-password-1")
    bob.save()
    c = Client()
    for _ in range(5):
        c.post("/accounts/login/", {"username": bob.email, "password": "wrong"})
    assert c.post("/accounts/login/", {"username": bob.email, "password": "x"}).status_code == 429
    assert _sign_on(live_server, "ada", f"/c/{course.code}/").url.endswith(f"/c/{course.code}/")
    assert requests.get(f"{live_server.url}/accounts/login/", timeout=10).status_code == 200
