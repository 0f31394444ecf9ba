"""The LMS roster in and grades out, against the test platform (its own process): an NRPS sync of
40 members previews and commits all or nothing like a CSV import; an AGS push of 40 students'
scores leaves 40 scores per grade column on the platform, a second push changes none, a person the
LMS refuses is named with its reason, and two linked LMS courses never disturb each other."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
import requests
from django.test import Client

from apps.core.models import GradingComponent, Membership, Role
from apps.gradebook.models import ScoreEntry
from apps.lti.models import LtiLink, LtiSync
from apps.roster.models import RosterImport
from tests.factories import CourseFactory, MembershipFactory, UserFactory
from tests.lti.test_launch import _launch, confirm_link, sign_in

pytestmark = pytest.mark.django_db(transaction=True)
LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership"


def _member(n: int, role: str = "Learner", status: str = "Active") -> dict[str, object]:
    return {
        "user_id": f"lms-{n}",
        "name": f"Student {n:02d}",
        "email": f"s{n:02d}@campus.example.edu",
        "roles": [f"{LIS}#{role}"],
        "status": status,
    }


def _linked(live_server, platform, course, context: str = "canvas-42") -> None:  # type: ignore[no-untyped-def]
    s = requests.Session()
    sign_in(live_server, s, "prof@campus.example.edu")
    page = _launch(
        platform,
        s,
        email="prof@campus.example.edu",
        role="Instructor",
        context=context,
        title=f"EE 290 {context}",
    )
    if page.url.endswith("/lti/account/"):  # the first launch links the LMS account once
        page = confirm_link(s, page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1) if token else "", "course": course.code},
        headers={"Referer": page.url},
        timeout=20,
    )


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    course = CourseFactory(title="Scalable AI")
    prof = UserFactory(email="prof@campus.example.edu")
    MembershipFactory(user=prof, course=course, role=Role.INSTRUCTOR)
    return course


def _staff(course) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(Membership.objects.get(course=course, role=Role.INSTRUCTOR).user)
    return c


def test_an_nrps_sync_of_40_members_previews_then_commits_all_or_nothing(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _linked(live_server, lti_platform, course)
    # Already in courseops: two of the LMS's students (one under an old name) and one who left.
    MembershipFactory(
        user=UserFactory(email="s01@campus.example.edu", full_name="Student 01"), course=course
    )
    MembershipFactory(
        user=UserFactory(email="s02@campus.example.edu", full_name="Old Name"), course=course
    )
    MembershipFactory(user=UserFactory(email="gone@campus.example.edu"), course=course)
    members = [_member(n) for n in range(1, 41)]
    members += [
        _member(41, "Instructor#TeachingAssistant".replace("#", "/", 0)),
        _member(42, status="Inactive"),
    ]
    members[-2]["roles"] = [f"{LIS}/Instructor#TeachingAssistant"]
    lti_platform.set_roster("canvas-42", members)
    staff = _staff(course)
    r = staff.post(f"/c/{course.code}/lms/roster/", follow=True)
    page = r.content.decode()
    assert "The LMS roster: 39 to add, 1 to update, 1 to drop" in page
    assert Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count() == 3
    record = RosterImport.objects.get()
    commit = staff.post(f"/c/{course.code}/roster/imports/{record.pk}/", follow=True)
    assert "39 added, 1 updated, 1 dropped" in commit.content.decode()
    active = Membership.objects.filter(course=course, is_active=True)
    assert active.filter(role=Role.STUDENT).count() == 40
    assert active.filter(role=Role.TA, user__email="s41@campus.example.edu").exists()
    assert not active.filter(user__email="gone@campus.example.edu").exists()
    assert not Membership.objects.filter(
        user__email="s42@campus.example.edu"
    ).exists()  # inactive in the LMS
    assert LtiSync.objects.filter(kind="roster", status="done").count() == 1


def test_a_link_whose_lms_does_not_answer_changes_nothing(
    live_server, lti_platform, course
) -> None:  # type: ignore[no-untyped-def]
    _linked(live_server, lti_platform, course)
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 5)])
    second = LtiLink.objects.get()
    LtiLink.objects.create(
        tool=second.tool,
        deployment_id=second.deployment_id,
        context_id="canvas-43",
        context_title="Section 2",
        course=course,
        nrps_url="http://127.0.0.1:9/nrps/canvas-43",  # nobody listens there
    )
    r = _staff(course).post(f"/c/{course.code}/lms/roster/", follow=True)
    assert "Section 2: the LMS did not send its roster" in r.content.decode()
    assert "Nothing was changed" in r.content.decode()
    assert not RosterImport.objects.exists()
    assert Membership.objects.filter(course=course, role=Role.STUDENT).count() == 0


def test_an_ags_push_of_40_students_then_again_changes_nothing(
    live_server, lti_platform, course
) -> None:  # type: ignore[no-untyped-def]
    _linked(live_server, lti_platform, course)
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 41)])
    staff = _staff(course)
    staff.post(f"/c/{course.code}/lms/roster/")
    staff.post(f"/c/{course.code}/roster/imports/{RosterImport.objects.get().pk}/")
    project = GradingComponent.objects.create(
        course=course, key="project", name="Project", weight=60, position=1
    )
    GradingComponent.objects.create(course=course, key="exam", name="Exam", weight=40, position=2)
    for n, m in enumerate(
        Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user")
    ):
        ScoreEntry.objects.create(
            course=course, component=project, student=m.user, percent=Decimal(60 + n % 40)
        )
    r = staff.post(f"/c/{course.code}/lms/grades/", follow=True)
    assert "40 score(s) sent" in r.content.decode()
    state = lti_platform.state()
    items = state["lineitems"]["canvas-42"]
    assert sorted(i["label"] for i in items) == ["Exam", "Project"]
    project_item = next(i for i in items if i["label"] == "Project")
    assert project_item["resourceId"] == f"courseops:{course.code}:component:project"
    scores = state["scores"][project_item["id"]]
    assert len(scores) == 40
    assert (
        scores["lms-1"]["scoreGiven"] in {60.0, 61.0, 62.0}
        or 60 <= scores["lms-1"]["scoreGiven"] <= 99
    )
    # Again: no new column, no score sent, the platform's scores unchanged.
    again = staff.post(f"/c/{course.code}/lms/grades/", follow=True).content.decode()
    assert "0 score(s) sent, 40 unchanged" in again
    after = lti_platform.state()
    assert len(after["lineitems"]["canvas-42"]) == 2
    assert after["scores"] == state["scores"]
    # One changed score goes alone.
    ScoreEntry.objects.filter(student__email="s05@campus.example.edu").update(
        percent=Decimal("99.5")
    )
    third = staff.post(f"/c/{course.code}/lms/grades/", follow=True).content.decode()
    assert "1 score(s) sent, 39 unchanged" in third


def test_a_student_the_lms_refuses_is_named_and_the_push_is_not_a_success(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _linked(live_server, lti_platform, course)
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 4)])
    staff = _staff(course)
    staff.post(f"/c/{course.code}/lms/roster/")
    staff.post(f"/c/{course.code}/roster/imports/{RosterImport.objects.get().pk}/")
    # s03 leaves the LMS course after the sync; a student added in courseops only is unknown.
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 3)])
    local = UserFactory(email="local@campus.example.edu", full_name="Only Local")
    MembershipFactory(user=local, course=course)
    project = GradingComponent.objects.create(
        course=course, key="project", name="Project", weight=100, position=1
    )
    for m in Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user"):
        ScoreEntry.objects.create(
            course=course, component=project, student=m.user, percent=Decimal(80)
        )
    page = staff.post(f"/c/{course.code}/lms/grades/", follow=True).content.decode()
    assert "2 not sent (listed below); 2 sent" in page
    sync = LtiSync.objects.filter(kind="grades").latest("pk")
    assert sync.status == "failed"
    assert sorted((f["email"], f["why"]) for f in sync.failures) == [
        ("local@campus.example.edu", "not a student in any linked LMS course"),
        ("s03@campus.example.edu", "User not found in course or is not a student"),
    ]
    assert "Only Local" in page
    # Back in the LMS course: a retry sends exactly the one that failed.
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 4)])
    retry = staff.post(f"/c/{course.code}/lms/grades/", follow=True).content.decode()
    assert "1 not sent (listed below); 1 sent" in retry


def test_two_linked_lms_courses_each_get_the_grades_and_a_failure_in_one_leaves_the_other(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course
) -> None:
    _linked(live_server, lti_platform, course, "sec-1")
    _linked(live_server, lti_platform, course, "sec-2")
    lti_platform.set_roster("sec-1", [_member(n) for n in range(1, 4)])
    lti_platform.set_roster("sec-2", [_member(n) for n in range(4, 7)])
    staff = _staff(course)
    staff.post(f"/c/{course.code}/lms/roster/")
    staff.post(f"/c/{course.code}/roster/imports/{RosterImport.objects.get().pk}/")
    assert Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count() == 6
    project = GradingComponent.objects.create(
        course=course, key="project", name="Project", weight=100, position=1
    )
    for m in Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user"):
        ScoreEntry.objects.create(
            course=course, component=project, student=m.user, percent=Decimal(70)
        )
    staff.post(f"/c/{course.code}/lms/grades/")
    state = lti_platform.state()
    for ctx in ("sec-1", "sec-2"):
        item = state["lineitems"][ctx][0]
        assert len(state["scores"][item["id"]]) == 3  # each section its own students
    assert set(LtiSync.objects.filter(kind="grades").values_list("status", flat=True)) == {"done"}
    # A section whose LMS now refuses a student fails alone; the other stays done.
    lti_platform.set_roster("sec-2", [_member(n) for n in range(4, 6)])
    ScoreEntry.objects.update(percent=Decimal(75))
    staff.post(f"/c/{course.code}/lms/grades/")
    latest = {s.link.context_id: s for s in LtiSync.objects.filter(kind="grades").order_by("pk")}
    assert latest["sec-1"].status == "done"
    assert latest["sec-1"].summary["sent"] == 3
    assert latest["sec-2"].status == "failed"
    assert [f["email"] for f in latest["sec-2"].failures] == ["s06@campus.example.edu"]


def test_the_scheduled_sync_commits_a_small_change_and_leaves_a_mass_drop_to_staff(  # type: ignore[no-untyped-def]
    live_server, lti_platform, course, settings
) -> None:
    from django.core import mail

    from apps.lti.tasks import sync_rosters

    _linked(live_server, lti_platform, course)
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 21)])
    said = sync_rosters()
    assert said == [
        f"{course.code}: {{'added': 20, 'updated': 0, 'unchanged': 0, 'dropped': 0, 'problems': 0}}"
    ]
    assert Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count() == 20
    # The LMS suddenly lists 5 of 20: 15 drops wait for a person.
    lti_platform.set_roster("canvas-42", [_member(n) for n in range(1, 6)])
    said = sync_rosters()
    assert "left for staff" in said[0]
    assert Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count() == 20
    assert any("waits for you" in m.subject for m in mail.outbox)
