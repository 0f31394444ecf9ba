"""One e-mail rule for every first link (LTI here; OIDC and SAML share `first_link_email`):
NFKC, one script, valid IDNA; a membership staff ended stays ended; an existing account is
never enrolled by an address alone into a course it is not on — the LMS roster sync proposes
that to staff. Against the real LTI platform peer (its own process, its own key)."""

from __future__ import annotations

import pytest

from apps.core.emails import EmailRefused, first_link_email
from apps.core.models import Membership, Role, User
from apps.lti.models import LtiAccount
from tests.factories import MembershipFactory, UserFactory
from tests.lti.test_launch import _launch
from tests.lti.test_services import _member

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("ａda@campus.example.edu", "ada@campus.example.edu"),  # full-width "ａ"
        (" Ada@Campus.Example.EDU. ", "ada@campus.example.edu"),
        ("jürgen@bücher.de", "jürgen@xn--bcher-kva.de"),
        ("山田@例え.jp", "山田@xn--r8jz45g.jp"),  # Latin with Han: UTS #39 highly restrictive
    ],
)
def test_the_rule_normalises(raw: str, stored: str) -> None:
    assert first_link_email(raw) == stored


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("eve@campus.\u0435xample.edu", "Cyrillic and Latin"),  # Cyrillic "е"
        ("eve@xn--zz.example.edu", "not a valid internationalised name"),
        ("eve@xn--campus-zzz.edu", "Ethiopic and Latin"),
        ("e\u200bve@campus.example.edu", "invisible"),
        ("eve-at-campus", "not an e-mail address"),
    ],
)
def test_the_rule_refuses_look_alikes(raw: str, says: str) -> None:
    with pytest.raises(EmailRefused, match=says):
        first_link_email(raw)


@pytest.mark.parametrize(
    "email",
    [
        "eve@campus.\u0435xample.edu",  # a Cyrillic "е" in the domain
        "eve@xn--zz.example.edu",  # an xn-- label that does not decode
        "prof@xn--campus-zzz.edu",  # one that decodes to Latin mixed with Ethiopic
    ],
)
def test_a_launch_with_a_look_alike_address_makes_no_account(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses, email
) -> None:
    before = User.objects.count()
    r = _launch(lti_platform, email=email, role="Learner", context="canvas-42", sub="lms-eve")
    assert r.status_code == 403
    assert "courseops links nobody by this address" in r.text
    assert User.objects.count() == before
    assert not LtiAccount.objects.filter(sub="lms-eve").exists()


def test_a_full_width_address_is_the_rostered_student_not_a_new_account(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a = two_courses[0]
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=a, role=Role.STUDENT)
    before = User.objects.count()
    r = _launch(lti_platform, email="ａda@campus.example.edu", role="Learner", context="canvas-42")
    assert r.url == f"{live_server.url}/c/{a.code}/", r.url
    assert User.objects.count() == before
    assert LtiAccount.objects.get(sub="ａda@campus.example.edu").user == ada


def test_a_student_staff_dropped_is_not_re_activated_by_a_launch(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a = two_courses[0]
    ada = UserFactory(email="ada@campus.example.edu")
    MembershipFactory(user=ada, course=a, role=Role.STUDENT, is_active=False)
    r = _launch(lti_platform, email="ada@campus.example.edu", role="Learner", context="canvas-42")
    assert r.status_code == 403
    assert "staff ended your membership of Scalable AI" in r.text
    assert not Membership.objects.get(user=ada, course=a).is_active
    assert not LtiAccount.objects.filter(user=ada).exists()


def test_an_existing_account_on_no_course_is_not_enrolled_by_its_address(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    a = two_courses[0]
    loner = UserFactory(email="loner@campus.example.edu")
    r = _launch(lti_platform, email="loner@campus.example.edu", role="Learner", context="canvas-42")
    assert r.url == f"{live_server.url}/lti/account/"  # sign in and confirm, or ask staff
    assert "not on the roster of Scalable AI" in r.text
    assert not Membership.objects.filter(user=loner, course=a).exists()
    assert not LtiAccount.objects.filter(user=loner).exists()


def test_the_scheduled_roster_sync_leaves_a_re_activation_to_staff(  # type: ignore[no-untyped-def]
    live_server, lti_platform, two_courses
) -> None:
    """The LMS still lists a student staff dropped in courseops: the sync proposes bringing
    her back (the preview says "re-activated") and leaves it for staff; it adds nobody by a
    look-alike address."""
    from apps.lti.tasks import sync_rosters

    a = two_courses[0]
    dropped = UserFactory(email="s01@campus.example.edu")
    MembershipFactory(user=dropped, course=a, role=Role.STUDENT, is_active=False)
    _launch(lti_platform, email="prof@campus.example.edu", role="Instructor", context="canvas-42")
    look_alike = {**_member(3), "email": "s03@campus.\u0435xample.edu"}
    lti_platform.set_roster("canvas-42", [_member(1), _member(2), look_alike])
    said = sync_rosters()
    assert "left for staff" in said[0], said
    assert not Membership.objects.get(user=dropped, course=a).is_active
    assert not User.objects.filter(email__contains="xn--").exists()
