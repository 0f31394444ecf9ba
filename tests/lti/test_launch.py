"""LTI 1.3 launches from a real platform (its own process, its own key and JWKS): an Instructor
links the LMS course once and lands in it, a Learner and a TA land with their roles, and a
tampered id_token (wrong signature, expired, wrong audience, replayed) is refused."""

from __future__ import annotations

import re

import pytest
import requests

from apps.core.models import AuditEvent, Membership, Role, User
from apps.lti.models import LtiLink
from tests.factories import PASSWORD, CourseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _post_form(s: requests.Session, page: requests.Response) -> requests.Response:
    action = re.search(r'action="([^"]+)"', page.text)
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    assert action is not None, page.text[:500]
    return s.post(action.group(1).replace("&amp;", "&"), data=fields, timeout=20)


def _launch(platform, s: requests.Session | None = None, **spec: str) -> requests.Response:  # type: ignore[no-untyped-def]
    """What the LMS and the browser do: initiation, the tool's redirect back, the form post."""
    s = s or requests.Session()
    form = s.get(platform.start_url(**spec), timeout=20)
    assert "Test LMS" in form.text, form.text[:500]
    return _post_form(s, form)


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    course = CourseFactory(title="Scalable AI")
    prof = UserFactory(email="prof@campus.example.edu")
    MembershipFactory(user=prof, course=course, role=Role.INSTRUCTOR)
    return course


def sign_in(live_server, s: requests.Session, email: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in by password through the log-in form, as a person would."""
    page = s.get(f"{live_server.url}/accounts/login/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    s.post(
        page.url,
        data={
            "csrfmiddlewaretoken": token.group(1) if token else "",
            "username": email,
            "password": PASSWORD,
        },
        headers={"Referer": page.url},
        timeout=10,
    )
    assert s.get(f"{live_server.url}/api/v1/me/", timeout=10).json()["email"] == email


def confirm_link(s: requests.Session, page: requests.Response) -> requests.Response:
    """Press "Link this LMS account" on the page a launch led to."""
    assert "Link this LMS account" in page.text, page.text[:800]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    return s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1) if token else ""},
        headers={"Referer": page.url},
        timeout=20,
    )


def _link(live_server, lti_platform, course) -> None:  # type: ignore[no-untyped-def]
    """The instructor, signed in to courseops, launches from the LMS course, links their LMS
    account once, then links the LMS course to the courseops course."""
    s = requests.Session()
    sign_in(live_server, s, "prof@campus.example.edu")
    asked = _launch(
        lti_platform,
        s,
        email="Prof@campus.example.edu",
        role="Instructor",
        context="canvas-42",
        title="EE 290 (Canvas)",
    )
    assert asked.url == f"{live_server.url}/lti/account/"
    page = confirm_link(s, asked)
    assert page.url == f"{live_server.url}/lti/link/"
    assert "Link “EE 290 (Canvas)” to courseops" in page.text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    done = s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1) if token else "", "course": course.code},
        headers={"Referer": page.url},
        timeout=20,
    )
    assert done.url == f"{live_server.url}/c/{course.code}/"


def test_an_instructor_links_once_and_learners_and_tas_land_with_their_roles(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _link(live_server, lti_platform, course)
    link = LtiLink.objects.get()
    assert (link.context_id, link.course_id) == ("canvas-42", course.pk)
    for email, role, expected in (
        ("learner@campus.example.edu", "Learner", Role.STUDENT),
        ("ta@campus.example.edu", "TeachingAssistant", Role.TA),
    ):
        r = _launch(lti_platform, email=email, role=role, context="canvas-42", name="New Person")
        assert r.url == f"{live_server.url}/c/{course.code}/", r.url
        assert "Scalable AI" in r.text
        member = Membership.objects.get(user__email=email, course=course)
        assert member.role == expected
    # The instructor's next launch goes straight to the course: linked once.
    again = _launch(
        lti_platform, email="prof@campus.example.edu", role="Instructor", context="canvas-42"
    )
    assert again.url == f"{live_server.url}/c/{course.code}/"
    assert LtiLink.objects.count() == 1
    assert User.objects.filter(email__iexact="prof@campus.example.edu").count() == 1


def test_a_second_lms_course_links_to_the_same_course_without_touching_the_first(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _link(live_server, lti_platform, course)
    s = requests.Session()
    page = _launch(
        lti_platform,
        s,
        email="prof@campus.example.edu",
        role="Instructor",
        context="canvas-43",
        title="Section 2",
    )
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1) if token else "", "course": course.code},
        headers={"Referer": page.url},
        timeout=20,
    )
    assert sorted(LtiLink.objects.values_list("context_id", flat=True)) == [
        "canvas-42",
        "canvas-43",
    ]


def test_a_learner_of_an_unlinked_lms_course_is_told_to_wait(
    live_server, lti_platform, course
) -> None:  # type: ignore[no-untyped-def]
    r = _launch(lti_platform, email="early@campus.example.edu", role="Learner", context="canvas-99")
    assert "This LMS course is not linked to courseops yet" in r.text
    assert not User.objects.filter(email="early@campus.example.edu").exists()  # no account
    # An LMS instructor unknown to courseops cannot link it either: no session, no account.
    s = requests.Session()
    stranger = _launch(
        lti_platform, s, email="visiting@campus.example.edu", role="Instructor", context="canvas-99"
    )
    assert stranger.url == f"{live_server.url}/lti/account/"
    assert "Sign in to courseops" in stranger.text
    assert s.get(f"{live_server.url}/api/v1/me/", timeout=10).status_code in (401, 403)
    assert not User.objects.filter(email="visiting@campus.example.edu").exists()


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        ("signature", "did not verify"),
        ("expired", "did not verify"),
        ("audience", "did not verify"),
    ],
)
def test_a_tampered_launch_is_refused(live_server, lti_platform, course, tamper, says) -> None:  # type: ignore[no-untyped-def]
    _link(live_server, lti_platform, course)
    s = requests.Session()
    r = _launch(
        lti_platform,
        s,
        email="mallory@campus.example.edu",
        role="Instructor",
        context="canvas-42",
        tamper=tamper,
    )
    assert r.status_code == 400
    assert says in r.text
    assert not User.objects.filter(email="mallory@campus.example.edu").exists()
    assert s.get(f"{live_server.url}/c/{course.code}/", timeout=10).url.startswith(
        f"{live_server.url}/accounts/login/"
    )
    assert AuditEvent.objects.filter(action="lti.refused").exists()


def test_a_replayed_launch_is_refused(live_server, lti_platform, course) -> None:  # type: ignore[no-untyped-def]
    _link(live_server, lti_platform, course)
    s = requests.Session()
    first = _launch(
        lti_platform, s, email="learner@campus.example.edu", role="Learner", context="canvas-42"
    )
    assert first.url == f"{live_server.url}/c/{course.code}/"
    replay = _post_form(s, s.get(f"{lti_platform.base}/replay", timeout=10))
    assert replay.status_code == 400
    assert "already used" in replay.text


def test_someone_signed_in_who_launches_keeps_the_same_account_and_session(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _link(live_server, lti_platform, course)
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=course, role=Role.STUDENT)
    s = requests.Session()
    sign_in(live_server, s, ada.email)  # signed in before the launch
    r = _launch(
        lti_platform, s, email="ADA@campus.example.edu", role="Learner", context="canvas-42"
    )
    assert r.url == f"{live_server.url}/c/{course.code}/"
    assert s.get(f"{live_server.url}/api/v1/me/", timeout=10).json()["id"] == ada.pk
    assert User.objects.filter(email__iexact="ada@campus.example.edu").count() == 1
    assert Membership.objects.filter(user=ada, course=course).count() == 1


def test_canvas_finds_the_tool_config_and_keys(live_server, lti_platform) -> None:  # type: ignore[no-untyped-def]
    config = requests.get(f"{live_server.url}/lti/config.json", timeout=10).json()
    assert config["oidc_initiation_url"].endswith("/lti/login/")
    assert config["target_link_uri"].endswith("/lti/launch/")
    keys = requests.get(f"{live_server.url}/lti/jwks/", timeout=10).json()
    assert keys["keys"][0]["kty"] == "RSA"
    assert "d" not in keys["keys"][0]  # never the private half


def test_deep_linking_links_the_course_and_answers_the_lms_with_a_signed_resource(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    s = requests.Session()
    sign_in(live_server, s, "prof@campus.example.edu")
    asked = _launch(
        lti_platform,
        s,
        email="prof@campus.example.edu",
        role="Instructor",
        context="dl-1",
        message="deep",
    )
    page = confirm_link(s, asked)
    assert page.url == f"{live_server.url}/lti/link/"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    answer = s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1) if token else "", "course": course.code},
        headers={"Referer": page.url},
        timeout=20,
    )
    assert "Return to the LMS" in answer.text
    assert f"form-action 'self' {lti_platform.base}" in answer.headers["Content-Security-Policy"]
    action = re.search(r'action="(http[^"]+/deeplink/return)"', answer.text)
    jwt_value = re.search(r'name="JWT" value="([^"]+)"', answer.text)
    assert action is not None
    assert jwt_value is not None
    back = s.post(action.group(1), data={"JWT": jwt_value.group(1)}, timeout=20)
    assert "Test LMS: added courseops: Scalable AI" in back.text
    item = lti_platform.state()["deep_links"][0]
    assert item["custom"] == {"courseops_course": course.code}
    assert LtiLink.objects.get().context_id == "dl-1"
    learner = _launch(lti_platform, email="new@campus.example.edu", role="Learner", context="dl-1")
    assert learner.url == f"{live_server.url}/c/{course.code}/"
    # A learner cannot add the tool.
    refused = _launch(
        lti_platform, email="new@campus.example.edu", role="Learner", context="dl-2", message="deep"
    )
    assert refused.status_code == 403
