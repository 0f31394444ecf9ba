"""`PASSWORD_LOGIN=off` shuts every door a password opens — the log-in page, the admin's log-in,
the token endpoint, HTTP Basic, password reset — while a campus sign-on session still reaches
`/admin/` for an administrator."""

from __future__ import annotations

import base64

import pytest
import requests
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import User
from tests.sso.test_oidc import _sign_on

PW = "a-long-admin-passphrase"


@pytest.fixture
def admin_user(db) -> User:  # type: ignore[no-untyped-def]
    return User.objects.create_superuser(email="ada@campus.example.edu", password=PW)


@pytest.mark.django_db
def test_with_password_log_in_off_the_admin_log_in_takes_no_password(admin_user, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_LOGIN = False
    c = Client()
    r = c.post("/admin/login/", {"username": admin_user.email, "password": PW, "next": "/admin/"})
    assert r.status_code == 403
    assert "Password log-in is turned off" in r.content.decode()
    assert "_auth_user_id" not in c.session
    assert c.get("/admin/").status_code == 302  # still outside
    assert c.get("/admin/login/").status_code == 403
    # The other doors: the token endpoint, HTTP Basic, password reset and a mailed reset link.
    api = APIClient()
    token = api.post(
        "/api/v1/auth/token/", {"username": admin_user.email, "password": PW}, format="json"
    )
    assert token.status_code == 403
    basic = base64.b64encode(f"{admin_user.email}:{PW}".encode()).decode()
    assert api.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Basic {basic}").status_code == 401
    assert c.post("/accounts/password/reset/", {"email": admin_user.email}).status_code == 403
    assert c.get("/accounts/password/reset/MQ/set-password/").status_code == 403


@pytest.mark.django_db
def test_with_password_log_in_on_the_admin_log_in_works_as_before(admin_user) -> None:  # type: ignore[no-untyped-def]
    c = Client()
    r = c.post("/admin/login/", {"username": admin_user.email, "password": PW, "next": "/admin/"})
    assert r.status_code == 302
    assert c.get("/admin/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_an_administrator_signed_on_by_campus_sso_reaches_the_admin(  # type: ignore[no-untyped-def]
    live_server, oidc_provider, settings
) -> None:
    """An e-mail alone never makes anyone an administrator: refused until an administrator links
    the campus identity (issuer + subject) to the account; then the campus sign-on reaches the
    admin while its password door stays shut."""
    from django.core.management import call_command

    settings.PASSWORD_LOGIN = False
    User.objects.create_superuser(email="ada@campus.example.edu", password=PW)
    first = _sign_on(live_server, "ada", "/admin/")
    assert first.url.startswith(f"{live_server.url}/accounts/sso/refused/")
    assert "staff or administrator rights" in first.text
    issuer = requests.get(
        settings.OIDC_OP_AUTHORIZATION_ENDPOINT.replace(
            "/authorize/", "/.well-known/openid-configuration"
        ),
        timeout=10,
    ).json()["issuer"]
    # The test provider numbers its people in order (ada is 1) and says so as the subject.
    call_command("sso_link", "ada@campus.example.edu", provider="oidc", issuer=issuer, subject="1")
    r = _sign_on(live_server, "ada", "/admin/")
    assert r.status_code == 200
    assert r.url == f"{live_server.url}/admin/"
    assert "Site administration" in r.text
    refused = requests.post(
        f"{live_server.url}/admin/login/",
        data={"username": "ada@campus.example.edu", "password": PW},
        timeout=10,
    )
    assert refused.status_code == 403


@pytest.mark.django_db
def test_a_password_reset_while_the_queue_is_down_is_sent_here_not_lost(  # type: ignore[no-untyped-def]
    admin_user, monkeypatch, mailoutbox, django_capture_on_commit_callbacks
) -> None:
    """The publish goes to a real Redis address where nothing listens: the page still answers
    as always and the e-mail goes out from the request instead of being dropped."""
    from apps.sso import tasks
    from courseops.celery import app

    dead = app.connection_for_write("redis://127.0.0.1:1/0")

    def publish_to_dead_broker(*args):  # type: ignore[no-untyped-def]
        return tasks.password_reset_email.apply_async(
            args, connection=dead, retry=True, retry_policy={"max_retries": 1, "interval_start": 0}
        )

    monkeypatch.setattr(tasks.password_reset_email, "delay", publish_to_dead_broker)
    with django_capture_on_commit_callbacks(execute=True):
        r = Client().post("/accounts/password/reset/", {"email": admin_user.email})
    assert r.status_code == 302
    assert r["Location"] == "/accounts/password/reset/sent/"
    assert [m.to for m in mailoutbox] == [[admin_user.email]]
    assert "/accounts/password/reset/" in mailoutbox[0].body
