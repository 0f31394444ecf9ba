"""Campus sign-on through SAML 2.0 against a real IdP (pysaml2's Server, its own process): a
person on a roster lands on their course with a signed assertion; someone on no roster, or a
response that does not verify, gets the refusal page and no account."""

from __future__ import annotations

import re

import pytest
import requests

from apps.core.models import AuditEvent, Role, User
from tests.factories import CourseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _post_form(s: requests.Session, page: requests.Response, **change: str) -> requests.Response:
    action = re.search(r'action="([^"]+)"', page.text)
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    assert action is not None, page.text[:500]
    return s.post(action.group(1).replace("&amp;", "&"), data={**fields, **change}, timeout=20)


def _saml_sign_on(
    live_server, username: str, next_path: str = "/", tamper: bool = False
) -> requests.Response:  # type: ignore[no-untyped-def]
    s = requests.Session()
    form = s.get(f"{live_server.url}/saml2/login/?next={next_path}", timeout=20)
    assert "SAML test IdP" in form.text, form.text[:500]
    key = re.search(r'name="key" value="([^"]+)"', form.text)
    posted = s.post(
        form.url.split("/sso/")[0] + "/login",
        data={"key": key.group(1) if key else "", "username": username, "password": "campus-pw"},
        timeout=20,
    )
    assert "SAMLResponse" in posted.text, posted.text[:500]
    if tamper:
        import base64

        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', posted.text))
        xml = base64.b64decode(fields["SAMLResponse"]).decode()
        xml = xml.replace("ada@campus.example.edu", "prof@campus.example.edu")
        return _post_form(s, posted, SAMLResponse=base64.b64encode(xml.encode()).decode())
    return _post_form(s, posted)


def test_a_student_on_the_roster_signs_on_through_the_idp(live_server, saml_idp) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ada = UserFactory(email="Ada@campus.example.edu")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    assert "campus SAML" in requests.get(f"{live_server.url}/accounts/login/", timeout=10).text
    r = _saml_sign_on(live_server, "ada", f"/c/{course.code}/")
    assert r.url == f"{live_server.url}/c/{course.code}/", r.url
    assert course.title in r.text
    assert AuditEvent.objects.filter(action="auth.sso_login", actor=ada).count() == 1
    assert User.objects.get(pk=ada.pk).email == "ada@campus.example.edu"  # one spelling


def test_someone_on_no_roster_is_refused(live_server, saml_idp) -> None:  # type: ignore[no-untyped-def]
    CourseFactory()
    before = User.objects.count()
    r = _saml_sign_on(live_server, "eve")
    assert "/accounts/sso/refused/" in r.url
    assert "on no course&#x27;s roster" in r.text
    assert User.objects.count() == before


def test_an_assertion_changed_after_signing_is_refused(live_server, saml_idp) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    for email in ("ada@campus.example.edu", "prof@campus.example.edu"):
        MembershipFactory(user=UserFactory(email=email), course=course, role=Role.STUDENT)
    r = _saml_sign_on(live_server, "ada", f"/c/{course.code}/", tamper=True)
    assert "/accounts/sso/refused/" in r.url
    assert "did not verify" in r.text
    assert not AuditEvent.objects.filter(action="auth.sso_login").exists()


def test_without_xmlsec1_every_saml_page_names_it_and_the_start_up_check_fails(  # type: ignore[no-untyped-def]
    live_server, saml_idp, settings
) -> None:
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    settings.SAML_CONFIG = {**settings.SAML_CONFIG, "xmlsec_binary": "/nonexistent/xmlsec1"}
    for method, path in (("get", "metadata/"), ("get", "login/"), ("post", "acs/")):
        r = getattr(requests, method)(f"{live_server.url}/saml2/{path}", timeout=10)
        assert r.status_code == 503, (path, r.status_code)
        assert "/nonexistent/xmlsec1" in r.text
        assert "apt-get install xmlsec1" in r.text
    with pytest.raises(SystemCheckError, match="xmlsec1"):
        call_command("check")


def test_the_first_sign_on_links_the_idps_stable_id_and_staff_need_more_than_an_email(
    live_server, saml_idp
) -> None:  # type: ignore[no-untyped-def]
    """The test IdP sends a transient NameID (new at every sign-on) and the `uid` attribute: the
    link is (entity id, uid). A TA whose address the IdP sends is refused and nothing is linked;
    an administrator links her by hand (`manage.py sso_link`) and she comes in."""
    from django.core.management import call_command

    from apps.sso.models import SsoIdentity

    course = CourseFactory()
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=course, role=Role.TA)
    refused = _saml_sign_on(live_server, "ada")
    assert "/accounts/sso/refused/" in refused.url
    assert "staff or administrator rights" in refused.text
    assert not SsoIdentity.objects.exists()
    issuer = f"{saml_idp.base}/metadata"  # the test IdP's entity id
    call_command(
        "sso_link", "ada@campus.example.edu", provider="saml", issuer=issuer, subject="ada"
    )
    r = _saml_sign_on(live_server, "ada", f"/c/{course.code}/")
    assert r.url == f"{live_server.url}/c/{course.code}/", r.url
    assert SsoIdentity.objects.get(user=ada).how == SsoIdentity.How.ADMIN
    student = UserFactory(email="eve@elsewhere.example.org")
    MembershipFactory(user=student, course=course, role=Role.STUDENT)
    assert _saml_sign_on(live_server, "eve", f"/c/{course.code}/").url.endswith(
        f"/c/{course.code}/"
    )
    eve = SsoIdentity.objects.get(user=student)
    assert (eve.issuer, eve.subject, eve.how) == (issuer, "eve", SsoIdentity.How.FIRST_SIGN_ON)


def test_sso_link_refuses_a_second_link_and_moves_one_with_replace() -> None:
    from django.core.management import CommandError, call_command

    from apps.sso.models import SsoIdentity

    ada = UserFactory(email="ada@campus.example.edu")
    bo = UserFactory(email="bo@campus.example.edu")
    args = {"provider": "saml", "issuer": "https://idp.example.edu", "subject": "ada"}
    call_command("sso_link", "ada@campus.example.edu", **args)
    with pytest.raises(CommandError, match="--replace"):
        call_command("sso_link", "bo@campus.example.edu", **args)
    with pytest.raises(CommandError, match="No account"):
        call_command("sso_link", "nobody@campus.example.edu", **args)
    call_command("sso_link", "bo@campus.example.edu", replace=True, **args)
    assert SsoIdentity.objects.get(subject="ada").user == bo
    assert not SsoIdentity.objects.filter(user=ada).exists()
