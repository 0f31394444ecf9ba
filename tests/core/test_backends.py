"""The log-in backend (Django's, with the session user's read compiled once): each browser is its
own user on every request, and a deactivated user or a changed password ends the session at the
next request, as with Django's backend."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.core.models import Role
from tests.factories import PASSWORD, CourseFactory, member

pytestmark = pytest.mark.django_db
LOGIN = "/accounts/login/"


def _logged_in(email: str) -> Client:
    client = Client()
    r = client.post(LOGIN, {"username": email, "password": PASSWORD})
    assert r.status_code == 302, r.content[:300]
    assert client.session["_auth_user_backend"] == "apps.core.backends.ModelBackend"
    return client


def test_each_session_reads_its_own_user_every_request() -> None:
    course = CourseFactory()
    ann = member(course, Role.STUDENT, full_name="Ann Lovelace")
    bob = member(course, Role.TA, full_name="Bob Hopper")
    a, b = _logged_in(ann.email), _logged_in(bob.email)
    for _ in range(2):
        pa = a.get(f"/c/{course.code}/").content.decode()
        pb = b.get(f"/c/{course.code}/").content.decode()
        assert "Ann Lovelace" in pa
        assert "Bob Hopper" not in pa
        assert "Bob Hopper" in pb
        assert "Ann Lovelace" not in pb


def test_a_deactivated_user_or_a_new_password_ends_the_session() -> None:
    course = CourseFactory()
    ann, bob = member(course), member(course)
    a, b = _logged_in(ann.email), _logged_in(bob.email)
    assert a.get(f"/c/{course.code}/").status_code == 200
    ann.is_active = False
    ann.save()
    assert a.get(f"/c/{course.code}/").url.startswith(LOGIN)  # type: ignore[attr-defined]
    bob.set_password("a whole new passphrase")
    bob.save()
    assert b.get(f"/c/{course.code}/").url.startswith(LOGIN)  # type: ignore[attr-defined]


def test_api_tokens_name_their_own_user_and_unknown_or_inactive_ones_get_401() -> None:
    from rest_framework.test import APIClient

    from apps.core.tokens import token_create, token_revoke

    course = CourseFactory()
    ann, bob = member(course), member(course)
    url = f"/api/v1/courses/{course.code}/slack/me/"
    for user in (ann, bob, ann):
        token, key = token_create(user=user, name="script")
        api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
        assert api.get("/api/v1/me/").json()["email"] == user.email
        assert api.get(url).status_code == 200
        token_revoke(user=user, token_id=token.pk)
        assert api.get(url).status_code == 401
    unknown = APIClient(HTTP_AUTHORIZATION="Token " + "0" * 40).get(url)
    assert unknown.status_code == 401
    assert unknown.json()["detail"] == "Invalid token."
    key = token_create(user=bob, name="script")[1]
    bob.is_active = False
    bob.save()
    inactive = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get(url)
    assert inactive.status_code == 401
    assert "inactive" in inactive.json()["detail"]
