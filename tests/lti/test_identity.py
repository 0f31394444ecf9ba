"""Whom a valid LTI launch may become. The test LMS (its own process, its own key) signs each
launch correctly; what is under test is that the e-mail it carries never opens another person's
account: course B's instructor, a TA, the site administrator and anyone not known only to
linked courses sign in to courseops and link their LMS account once, and only then does a
launch sign them in — with the role of the linked course, there only."""

from __future__ import annotations

import pytest
import requests

from apps.core.models import AuditEvent, Membership, Role, User
from apps.lti.models import LtiAccount
from tests.factories import MembershipFactory, UserFactory
from tests.lti.test_launch import _launch, confirm_link, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def _me(live_server, s: requests.Session) -> int | None:  # type: ignore[no-untyped-def]
    r = s.get(f"{live_server.url}/api/v1/me/", timeout=10)
    return r.json()["id"] if r.status_code == 200 else None


@pytest.mark.parametrize(
    ("email", "role", "context"),
    [
        ("profb@campus.example.edu", "Learner", "canvas-42"),  # B's instructor, as a learner
        ("profb@campus.example.edu.", "Learner", "canvas-42"),  # … with a trailing dot
        ("ProfB@Campus.Example.EDU", "Instructor", "canvas-42"),
        ("root@campus.example.edu", "Learner", "canvas-42"),  # the site administrator
        ("ta-a@campus.example.edu", "Learner", "canvas-42"),  # A's TA, as a learner
        ("profb@campus.example.edu", "Instructor", "canvas-77"),  # from an unlinked course
    ],
)
def test_a_launch_naming_someone_elses_account_gives_no_session(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses, email, role, context
) -> None:
    a, b, _, profb, _ = two_courses
    users_before = User.objects.count()
    s = requests.Session()
    r = _launch(lti_platform, s, email=email, role=role, context=context, sub="mallory-1")
    assert r.url == f"{live_server.url}/lti/account/"
    assert "Sign in to courseops" in r.text
    assert _me(live_server, s) is None
    assert s.get(f"{live_server.url}/admin/", timeout=10).url.startswith(
        f"{live_server.url}/admin/login/"
    )
    roster = s.get(f"{live_server.url}/api/v1/courses/{b.code}/roster/", timeout=10)
    assert roster.status_code in (401, 403)
    assert User.objects.count() == users_before  # the trailing dot made no second account
    assert not Membership.objects.filter(user=profb, course=a).exists()
    assert not LtiAccount.objects.filter(sub="mallory-1").exists()
    assert AuditEvent.objects.filter(action="lti.link_asked").exists()


def test_after_linking_while_signed_in_a_launch_signs_in_with_the_linked_courses_role_only(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a, b, _, profb, _ = two_courses
    s = requests.Session()
    asked = _launch(
        lti_platform,
        s,
        email="profb@campus.example.edu.",
        role="Learner",
        context="canvas-42",
        sub="lms-profb",
    )
    assert asked.url == f"{live_server.url}/lti/account/"
    sign_in(live_server, s, "profb@campus.example.edu")
    page = s.get(asked.url, timeout=10)
    assert "signed in to courseops as" in page.text
    done = confirm_link(s, page)
    assert done.url == f"{live_server.url}/c/{a.code}/"
    assert LtiAccount.objects.get(user=profb).how == "confirmed"
    assert Membership.objects.get(user=profb, course=a).role == Role.STUDENT  # the LMS's role
    assert Membership.objects.get(user=profb, course=b).role == Role.INSTRUCTOR  # untouched

    fresh = requests.Session()  # another day, another browser: the link signs in directly
    r = _launch(
        lti_platform,
        fresh,
        email="profb@campus.example.edu",
        role="Learner",
        context="canvas-42",
        sub="lms-profb",
    )
    assert r.url == f"{live_server.url}/c/{a.code}/"
    assert _me(live_server, fresh) == profb.pk


def test_a_courseops_account_links_one_lms_account_of_a_platform(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a, _, ta, _, _ = two_courses
    s = requests.Session()
    sign_in(live_server, s, ta.email)
    first = _launch(lti_platform, s, email=ta.email, role="TeachingAssistant", context="canvas-42")
    assert confirm_link(s, first).url == f"{live_server.url}/c/{a.code}/"
    # A second LMS identity naming the same person is refused, with the reason, not linked.
    second = _launch(
        lti_platform, s, email=ta.email, role="TeachingAssistant", context="canvas-42", sub="ta-2"
    )
    refused = confirm_link(s, second)
    assert refused.status_code == 409
    assert "already linked to another account of this LMS" in refused.text
    assert list(LtiAccount.objects.filter(user=ta).values_list("sub", flat=True)) == [ta.email]


def test_new_people_of_a_linked_course_get_an_account_and_the_strongest_role(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a = two_courses[0]
    r = _launch(
        lti_platform,
        email="  New.Co-Teacher@Campus.example.edu. ",
        role="Instructor+TeachingAssistant",
        context="canvas-42",
    )
    assert r.url == f"{live_server.url}/c/{a.code}/"
    user = User.objects.get(email="new.co-teacher@campus.example.edu")
    assert Membership.objects.get(user=user, course=a).role == Role.INSTRUCTOR
    assert LtiAccount.objects.get(user=user).how == "new"


def test_a_learner_known_only_to_the_linked_course_is_linked_on_first_launch(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a = two_courses[0]
    ada = UserFactory(email="ada@campus.example.edu")  # imported from the roster, say
    MembershipFactory(user=ada, course=a, role=Role.STUDENT)
    s = requests.Session()
    r = _launch(
        lti_platform, s, email="ADA@campus.example.edu", role="Learner", context="canvas-42"
    )
    assert r.url == f"{live_server.url}/c/{a.code}/"
    assert _me(live_server, s) == ada.pk
    assert LtiAccount.objects.get(user=ada).how == "first-launch"
