"""Campus sign-on through OpenID Connect against a real provider (django-oauth-toolkit, its own
process): a person on a roster lands on their course; one on no roster, or whose e-mail the
provider does not vouch for, gets the refusal page and no account; password log-in can be off."""

from __future__ import annotations

import re

import pytest
import requests

from apps.core.models import AuditEvent, Role, User
from tests.factories import CourseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _sign_on(  # type: ignore[no-untyped-def]
    live_server, username: str, next_path: str = "/", s: requests.Session | None = None
) -> requests.Response:
    """What a browser does: start on courseops, log in on the provider's form, come back."""
    s = s or requests.Session()
    form = s.get(f"{live_server.url}/oidc/authenticate/?next={next_path}", timeout=10)
    assert "Campus sign-on (test provider)" in form.text, form.text[:500]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    nxt = re.search(r'name="next" value="([^"]*)"', form.text)
    assert token is not None
    assert nxt is not None
    return s.post(
        form.url,
        data={
            "csrfmiddlewaretoken": token.group(1),
            "username": username,
            "password": "campus-pw",
            "next": nxt.group(1).replace("&amp;", "&"),
        },
        headers={"Referer": form.url},
        timeout=20,
    )


def test_a_student_on_the_roster_signs_on_and_lands_on_the_course(
    live_server, oidc_provider
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ada = UserFactory(email="Ada@Campus.example.edu")  # the roster's spelling, any case
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    login = requests.get(f"{live_server.url}/accounts/login/", timeout=10).text
    assert "Log in with your campus account" in login
    r = _sign_on(live_server, "ada", f"/c/{course.code}/")
    assert r.url == f"{live_server.url}/c/{course.code}/", r.url
    assert course.title in r.text
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 1
    assert User.objects.count() == 1  # nobody new


@pytest.mark.parametrize(
    ("username", "says"),
    [
        ("eve", "This e-mail address is on no course&#x27;s roster in courseops."),
        ("uno", "e-mail address is not verified"),
    ],
)
def test_a_person_the_roster_does_not_know_is_refused_with_a_reason(  # type: ignore[no-untyped-def]
    live_server, oidc_provider, username, says
) -> None:
    course = CourseFactory()
    uno = UserFactory(email="uno@campus.example.edu")
    MembershipFactory(user=uno, course=course, role=Role.STUDENT)
    before = User.objects.count()
    r = _sign_on(live_server, username, f"/c/{course.code}/")
    assert r.url.startswith(f"{live_server.url}/accounts/sso/refused/")
    assert "You could not be signed on" in r.text
    assert says in r.text
    assert "ask its staff" in r.text
    assert User.objects.count() == before
    refused = AuditEvent.objects.get(action="auth.sso_refused")
    assert refused.after["provider"] == "oidc"
    assert "secret" not in str(refused.after).lower()


def test_a_forged_callback_is_refused_not_a_500(live_server, oidc_provider) -> None:  # type: ignore[no-untyped-def]
    s = requests.Session()
    s.get(f"{live_server.url}/oidc/authenticate/", timeout=10, allow_redirects=False)
    forged = s.get(f"{live_server.url}/oidc/callback/?code=forged&state=wrong", timeout=10)
    assert forged.status_code == 400  # an unknown state: a suspicious request, nothing more


def test_password_log_in_can_be_turned_off(live_server, oidc_provider, settings) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client

    settings.PASSWORD_LOGIN = False
    user = UserFactory(email="pw@campus.example.edu")
    user.set_password("a-password-1")
    user.save()
    page = requests.get(f"{live_server.url}/accounts/login/", timeout=10).text
    assert 'name="password"' not in page
    assert "Log in with your campus account" in page
    r = Client().post("/accounts/login/", {"username": user.email, "password": "a-password-1"})
    assert r.status_code == 403
    assert "Password log-in is turned off" in r.content.decode()
    assert "_auth_user_id" not in Client().session


def test_without_configuration_the_sign_on_is_not_offered(live_server) -> None:  # type: ignore[no-untyped-def]
    page = requests.get(f"{live_server.url}/accounts/login/", timeout=10).text
    assert "campus account" not in page
    assert requests.get(f"{live_server.url}/oidc/authenticate/", timeout=10).status_code == 404


def test_with_password_log_in_off_the_api_gives_no_token_for_a_password(settings) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    settings.PASSWORD_LOGIN = False
    user = UserFactory(email="api@campus.example.edu")
    user.set_password("a-password-1")
    user.save()
    r = APIClient().post(
        "/api/v1/auth/token/", {"username": user.email, "password": "a-password-1"}, format="json"
    )
    assert r.status_code == 403
    assert r.json()["code"] == "password_login_off"


def _password_session(live_server, email: str, password: str) -> requests.Session:  # type: ignore[no-untyped-def]
    s = requests.Session()
    page = s.get(f"{live_server.url}/accounts/login/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    r = s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1), "username": email, "password": password},
        headers={"Referer": page.url},
        timeout=10,
    )
    assert "Log out" in r.text, r.text[:300]
    return s


def test_an_identity_is_its_issuer_and_subject_linked_once_not_its_email(
    live_server, oidc_provider
) -> None:  # type: ignore[no-untyped-def]
    """Ada's first sign-on links the provider's (iss, sub) to her account. When the roster
    later gives her address to someone else, her sign-on still opens her account, not theirs."""
    from apps.sso.models import SsoIdentity

    course = CourseFactory()
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    assert _sign_on(live_server, "ada", f"/c/{course.code}/").url.endswith(f"/c/{course.code}/")
    link = SsoIdentity.objects.get(user=ada)
    assert link.how == SsoIdentity.How.FIRST_SIGN_ON
    assert link.issuer.startswith("http://127.0.0.1:")
    assert link.subject
    User.objects.filter(pk=ada.pk).update(email="ada.lovelace@campus.example.edu")
    other = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=other, course=course, role=Role.STUDENT)
    again = _sign_on(live_server, "ada", f"/c/{course.code}/")
    assert again.url.endswith(f"/c/{course.code}/")
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 2
    assert not AuditEvent.objects.filter(action="auth.sso_login", actor=other).exists()
    assert SsoIdentity.objects.count() == 1


@pytest.mark.parametrize("rights", ["ta", "instructor", "administrator"])
def test_staff_or_an_administrator_is_never_signed_in_by_email_alone(
    live_server, oidc_provider, rights: str
) -> None:  # type: ignore[no-untyped-def]
    """The provider vouches for ada@…, who is a TA, an instructor or a site administrator here:
    refused, nothing linked. Signed in with her password, she links the campus account from
    Your account; from then on the campus sign-on opens her account."""
    from apps.sso.models import SsoIdentity

    course = CourseFactory()
    ada = UserFactory(email="ada@campus.example.edu")
    ada.set_password("a-password-1")
    if rights == "administrator":
        ada.is_superuser = ada.is_staff = True
    ada.save()
    role = Role.TA if rights == "ta" else Role.INSTRUCTOR
    MembershipFactory(
        user=ada, course=course, role=role if rights != "administrator" else Role.STUDENT
    )
    refused = _sign_on(live_server, "ada", "/")
    assert refused.url.startswith(f"{live_server.url}/accounts/sso/refused/")
    assert "staff or administrator rights" in refused.text
    assert not SsoIdentity.objects.exists()
    assert not AuditEvent.objects.filter(action="auth.sso_login").exists()
    signed_in = _password_session(live_server, "ada@campus.example.edu", "a-password-1")
    account = signed_in.get(f"{live_server.url}/accounts/sso/", timeout=10).text
    assert "Link my campus account" in account
    # Signing on while signed in does not link by itself (a shared computer): still refused.
    assert "staff or administrator rights" in _sign_on(live_server, "ada", "/", s=signed_in).text
    assert not SsoIdentity.objects.exists()
    page = signed_in.get(f"{live_server.url}/accounts/sso/", timeout=10).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    asked = signed_in.post(
        f"{live_server.url}/accounts/sso/link/",
        data={"csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{live_server.url}/accounts/sso/"},
        allow_redirects=False,
        timeout=10,
    )
    assert asked.status_code == 302
    assert asked.headers["Location"].startswith("/oidc/authenticate/")
    # The provider still knows her from the attempt above: it sends her straight back.
    done = signed_in.get(f"{live_server.url}{asked.headers['Location']}", timeout=20)
    assert done.url == f"{live_server.url}/accounts/sso/", done.url
    assert "Linked by the person" in done.text
    assert SsoIdentity.objects.get(user=ada).how == SsoIdentity.How.CONFIRMED
    later = _sign_on(live_server, "ada", f"/c/{course.code}/")
    assert later.url.endswith(f"/c/{course.code}/")
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 2
