"""Extension requests as students and staff use them: ask on the page, the course's rule, the
staff queue, approve / approve other days / decline with e-mails both ways, the deadline that
moves everywhere (the slack API, the calendar feed's JSON, Today), closing after the deadline,
a group's milestone, a dropped student's request, and any bytes as a document."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.models import Role, User
from apps.core.timefmt import format_instant
from apps.extensions import services
from apps.extensions.models import ExtensionRequest
from tests.factories import (
    AssignmentFactory,
    CourseFactory,
    GroupFactory,
    GroupMembershipFactory,
    MilestoneFactory,
    member,
)

pytestmark = pytest.mark.django_db


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory(extension_auto_max_days=0)  # no rule unless a test turns it on
    a1 = AssignmentFactory(course=course, code="A1")
    ta = member(course, Role.TA, email="ta@uni.edu")
    ada = member(course, email="ada@uni.edu", full_name="Ada Lovelace")
    bo = member(course, email="bo@uni.edu")
    group = GroupFactory(course=course, name="Tensor Cores")
    for u in (ada, bo):
        GroupMembershipFactory(group=group, user=u)
    return course, a1, ta, ada, bo, group


def _effective(client: Client, course_code: str, code: str) -> str:
    me = client.get(f"/api/v1/courses/{course_code}/slack/me/").json()
    return next(d["effective"] for d in me["deadlines"] if d["assignment"] == code)


def test_a_request_approved_moves_the_deadline_everywhere_and_emails_both_ways(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course, a1, ta, ada, _bo, _group = world
    student = as_user(ada)
    before = _effective(student, course.code, "A1")
    with django_capture_on_commit_callbacks(execute=True):
        answer = student.post(
            f"/c/{course.code}/extensions/ask/",
            {"target": f"a{a1.pk}", "days": "3", "reason": "I have the flu this whole week."},
        )
    assert answer.status_code == 302
    assert [m.to for m in mail.outbox] == [["ta@uni.edu"]]  # staff told, oldest first queue
    assert "Ada Lovelace" in mail.outbox[0].subject
    queue = as_user(ta).get(f"/c/{course.code}/extensions/").content.decode()
    assert "I have the flu this whole week." in queue
    assert "slack days left 3" in queue
    r = ExtensionRequest.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        done = as_user(ta).post(
            f"/c/{course.code}/extensions/{r.pk}/approve/", {"days": "3", "comment": ""}
        )
    assert done.status_code == 302
    after = _effective(student, course.code, "A1")
    assert dt.datetime.fromisoformat(after) - dt.datetime.fromisoformat(before) == dt.timedelta(
        days=3
    )
    moved = a1.due_at + dt.timedelta(days=3)
    assert mail.outbox[-1].to == ["ada@uni.edu"]
    assert format_instant(moved, course.timezone) in mail.outbox[-1].body
    events = student.get(f"/api/v1/courses/{course.code}/calendar/").json()
    due = [e["start"] for e in events if e["kind"] == "assignment" and e["code"] == "A1"]
    assert [dt.datetime.fromisoformat(d) for d in due] == [moved]  # the feed's deadline moved
    today = student.get(f"/c/{course.code}/").content.decode()
    assert "Extension on A1" in today
    assert "approved, 3 day(s)" in today


def test_the_course_rule_approves_a_small_early_request_once_per_student(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, _ta, ada, _bo, _group = world
    course.extension_auto_max_days, course.extension_auto_per_student = 2, 1
    course.save()
    a2 = AssignmentFactory(course=course, code="A2")
    first = services.request_create(
        actor=ada, course=course, days=2, reason="A conference trip.", assignment_id=a1.pk
    )
    assert (first.status, first.auto, first.approved_days) == ("approved", True, 2)
    second = services.request_create(
        actor=ada, course=course, days=1, reason="Another conference.", assignment_id=a2.pk
    )
    assert second.status == "open"  # her one automatic approval is used
    page = as_user(ada).get(f"/c/{course.code}/extensions/").content.decode()
    assert "Approved: 2 days" in page
    assert "(course rule)" in page
    assert "Waiting for staff" in page


def test_more_than_the_rule_or_after_the_deadline_waits_for_staff(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, _ta, ada, bo, _group = world
    course.extension_auto_max_days = 2
    course.save()
    big = services.request_create(
        actor=ada, course=course, days=3, reason="Three days of surgery.", assignment_id=a1.pk
    )
    assert big.status == "open"
    with time_machine.travel(a1.due_at + dt.timedelta(hours=1)):
        late = services.request_create(
            actor=bo,
            course=course,
            days=1,
            reason="My laptop died at the deadline.",
            assignment_id=a1.pk,
        )
    assert late.status == "open"


def test_requests_close_hours_after_the_deadline_with_the_time_said(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, _ta, ada, _bo, _group = world
    closes = a1.due_at + dt.timedelta(hours=course.extension_close_hours)
    with time_machine.travel(closes + dt.timedelta(minutes=1)):
        answer = as_user(ada).post(
            f"/c/{course.code}/extensions/ask/",
            {"target": f"a{a1.pk}", "days": "1", "reason": "I forgot about the deadline."},
        )
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "closed" in page
    assert format_instant(closes, course.timezone) in page
    assert not ExtensionRequest.objects.exists()


def test_bad_values_are_refused_at_their_field_and_nothing_is_stored(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, _ta, ada, _bo, _group = world
    for data, words in (
        ({"target": f"a{a1.pk}", "days": "99", "reason": "A long reason here."}, "less than"),
        ({"target": f"a{a1.pk}", "days": "1", "reason": "flu"}, "a sentence or two"),
        ({"target": "a999999", "days": "1", "reason": "A long reason here."}, "valid choice"),
    ):
        answer = as_user(ada).post(f"/c/{course.code}/extensions/ask/", data)
        assert answer.status_code == 400
        assert words in answer.content.decode()
    assert not ExtensionRequest.objects.exists()


def test_staff_approve_other_days_only_with_a_reason_and_decline_only_with_a_comment(
    world,
) -> None:  # type: ignore[no-untyped-def]
    course, a1, ta, ada, bo, _group = world
    r = services.request_create(
        actor=ada, course=course, days=5, reason="A family emergency abroad.", assignment_id=a1.pk
    )
    with pytest.raises(services.DomainError, match="other days"):
        services.decide(actor=ta, course=course, request_id=r.pk, approve=True, days=2)
    r = services.decide(
        actor=ta, course=course, request_id=r.pk, approve=True, days=2, comment="Two is enough."
    )
    assert (r.status, r.approved_days) == ("approved", 2)
    other = services.request_create(
        actor=bo, course=course, days=1, reason="I overslept, sorry.", assignment_id=a1.pk
    )
    with pytest.raises(services.DomainError, match="why"):
        services.decide(actor=ta, course=course, request_id=other.pk, approve=False)
    with pytest.raises(services.NotAllowed):
        services.decide(actor=ada, course=course, request_id=other.pk, approve=True)
    services.decide(
        actor=ta, course=course, request_id=other.pk, approve=False, comment="Use a slack day."
    )
    with pytest.raises(services.Conflict, match="already declined"):
        services.decide(actor=ta, course=course, request_id=other.pk, approve=True)


def test_staff_download_a_tab_of_requests_as_csv_in_course_time_without_reasons(world) -> None:  # type: ignore[no-untyped-def]
    """What a TA keeps in a spreadsheet today: who asked for what, and what was decided, in the
    course's time with the zone named; the tab's filter holds; the reason stays in the app."""
    import csv
    import io

    course, a1, ta, ada, bo, _group = world
    r = services.request_create(
        actor=ada, course=course, days=3, reason="MEDICAL-DETAIL-ADA", assignment_id=a1.pk
    )
    services.decide(actor=ta, course=course, request_id=r.pk, approve=True, days=2, comment="Two.")
    services.request_create(
        actor=bo, course=course, days=1, reason="Overslept.", assignment_id=a1.pk
    )
    url = f"/c/{course.code}/extensions/"
    page = as_user(ta).get(f"{url}?status=approved").content.decode()
    assert 'href="?status=approved&amp;format=csv"' in page

    def rows(status: str) -> list[dict[str, str]]:
        response = as_user(ta).get(f"{url}?status={status}&format=csv")
        assert response["Content-Type"].startswith("text/csv")
        text = b"".join(response.streaming_content).decode()
        assert "MEDICAL-DETAIL-ADA" not in text
        assert "Overslept" not in text
        return list(csv.DictReader(io.StringIO(text)))

    (approved,) = rows("approved")
    assert approved["email"] == "ada@uni.edu"
    assert approved["for"].startswith("A1 ")
    assert (approved["days asked"], approved["days granted"]) == ("3", "2")
    assert approved["status"] == "Approved"
    assert approved["decided by"] == "ta@uni.edu"
    r.refresh_from_db()
    assert approved["asked"] == format_instant(r.created_at, course.timezone)  # zone named
    assert approved["comment to the student"] == "Two."
    assert [x["email"] for x in rows("open")] == ["bo@uni.edu"]
    assert sorted(x["email"] for x in rows("")) == ["ada@uni.edu", "bo@uni.edu"]
    assert as_user(ada).get(f"{url}?status=&format=csv")["Content-Type"].startswith("text/html")


def test_a_groups_milestone_request_moves_the_groups_milestone(world) -> None:  # type: ignore[no-untyped-def]
    from apps.milestones.models import GroupMilestone

    course, _a1, ta, ada, bo, group = world
    m = MilestoneFactory(course=course, key="proposal", name="Project proposal")
    r = services.request_create(
        actor=ada, course=course, days=2, reason="Our node failed all week.", milestone_id=m.pk
    )
    assert r.group == group
    with pytest.raises(services.Conflict, match="already has an open request"):
        services.request_create(
            actor=bo, course=course, days=1, reason="Same trouble for us.", milestone_id=m.pk
        )
    services.decide(actor=ta, course=course, request_id=r.pk, approve=True)
    assert GroupMilestone.objects.get(milestone=m, group=group).extension_hours == 48
    assert services.deadline_of(course, bo, assignment=None, milestone=m) == m.due_at + (
        dt.timedelta(days=2)
    )


def test_a_dropped_students_open_request_is_closed_and_check_course_stays_at_0(world) -> None:  # type: ignore[no-untyped-def]
    from apps.core.invariants import run_checks
    from apps.core.models import Membership
    from apps.roster.services import roster_commit, roster_upload

    course, a1, _ta, ada, _bo, _group = world
    r = services.request_create(
        actor=ada, course=course, days=1, reason="A conference trip.", assignment_id=a1.pk
    )
    instructor = member(course, Role.INSTRUCTOR)
    keep = Membership.objects.filter(course=course, role=Role.STUDENT).exclude(user=ada)
    rows = "".join(
        f"{m.user.full_name},{m.user.email},,student\n" for m in keep.select_related("user")
    )
    record, _ = roster_upload(
        actor=instructor,
        course=course,
        filename="r.csv",
        data=f"name,email,sid,role\n{rows}".encode(),
    )
    roster_commit(actor=instructor, record=record)
    r.refresh_from_db()
    assert (r.status, r.comment) == ("closed", "Closed: the student was dropped from the course.")
    assert run_checks(course.pk) == []


def test_the_api_asks_lists_and_decides(world) -> None:  # type: ignore[no-untyped-def]
    course, a1, ta, ada, bo, _group = world
    api = f"/api/v1/courses/{course.code}/extensions/"
    made = as_user(ada).post(
        api,
        {"assignment": a1.pk, "days": 2, "reason": "A conference trip.", "for_group": True},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["status"], body["group"], body["target"]) == (
        "open",
        "Tensor Cores",
        f"A1 {a1.title}",
    )
    assert as_user(bo).get(api).json()["count"] == 0  # her teammate's list: his own only
    assert as_user(ta).get(api + "?status=open").json()["count"] == 1
    refused = as_user(bo).post(
        f"{api}{body['id']}/decide/", {"approve": True}, content_type="application/json"
    )
    assert refused.status_code == 403
    ok = as_user(ta).post(
        f"{api}{body['id']}/decide/", {"approve": True}, content_type="application/json"
    )
    assert ok.json()["status"] == "approved"
    # a group's extension moves the teammate's deadline too
    me = as_user(bo).get(f"/api/v1/courses/{course.code}/slack/me/").json()
    a1_row = next(d for d in me["deadlines"] if d["assignment"] == "A1")
    assert dt.datetime.fromisoformat(a1_row["effective"]) == a1.due_at + dt.timedelta(days=2)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=2048), st.binary(max_size=64).map(lambda b: b"%PDF-" + b)))
def test_any_bytes_as_a_document_get_a_clear_answer_never_a_500(world, data: bytes) -> None:  # type: ignore[no-untyped-def]
    course, a1, ta, ada, _bo, _group = world
    ExtensionRequest.objects.all().delete()
    answer = as_user(ada).post(
        f"/c/{course.code}/extensions/ask/",
        {
            "target": f"a{a1.pk}",
            "days": "1",
            "reason": "A doctor's note is attached.",
            "document": SimpleUploadedFile("note.pdf", data),
        },
    )
    assert answer.status_code in {302, 400}
    if data.startswith((b"%PDF-", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
        assert answer.status_code == 302
        r = ExtensionRequest.objects.get()
        assert bytes(r.document) == data
        staff_copy = as_user(ta).get(f"/c/{course.code}/extensions/{r.pk}/document/")
        assert staff_copy.content == data
    else:
        assert answer.status_code == 400
        page = answer.content.decode()
        assert "PDF, PNG or JPEG" in page or "empty" in page
        assert not ExtensionRequest.objects.exists()
