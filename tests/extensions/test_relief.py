"""One deadline, one cap (#67), replayed through the pages as students and staff use them: five
members of a group each asking "2 days for my whole group" get one automatic approval, the rest
queued or refused with the arithmetic; a slack day then an extension do what the course file
says, on the staff card; staff go past the cap only by confirming it, audited."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from apps.core.models import AuditEvent, Role, User
from apps.extensions.models import ExtensionRequest
from apps.slackdays.models import DeadlineException, LedgerEntry, SlackAccount
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = pytest.mark.django_db
EE290 = {  # the demo course file's extensions and relief policy
    "extension_auto_max_days": 2,
    "extension_auto_per_student": 1,
    "extension_auto_per_group": 1,
    "extension_auto_per_deadline": 1,
    "relief_cap_days": 7,
    "relief_over_cap": "staff",
}


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def _effective(client: Client, code: str, assignment: str) -> dt.datetime:
    me = client.get(f"/api/v1/courses/{code}/slack/me/").json()
    when = next(d["effective"] for d in me["deadlines"] if d["assignment"] == assignment)
    return dt.datetime.fromisoformat(when)


def test_five_members_asking_for_the_whole_group_get_one_automatic_approval() -> None:
    course = CourseFactory(**EE290, relief_slack_with_extension="refund")
    a3 = AssignmentFactory(course=course, code="A3")
    ta = member(course, Role.TA)
    group = group_of(course, 5)
    members = [m.user for m in group.memberships.order_by("user_id")]
    answers = []
    for u in members:
        answers.append(
            as_user(u).post(
                f"/c/{course.code}/extensions/ask/",
                {
                    "target": f"a{a3.pk}",
                    "days": "2",
                    "for_group": "on",
                    "reason": "Our node was down for two days.",
                },
            )
        )
    assert [a.status_code for a in answers] == [302, 302, 400, 400, 400]
    refused = answers[2].content.decode()
    assert "Your group already has an open request on A3" in refused
    rows = ExtensionRequest.objects.order_by("pk")
    assert [(r.status, r.auto) for r in rows] == [("approved", True), ("open", False)]
    # the deadline moved once, by 2 days, for every member: not 10
    for u in members:
        assert _effective(as_user(u), course.code, "A3") == a3.due_at + dt.timedelta(days=2)
    queued = rows[1]
    assert "+2 days (group extension, approved" in queued.relief_note
    card = as_user(ta).get(f"/c/{course.code}/extensions/").content.decode()
    assert "Relief: +2 days (group extension, approved" in card
    assert "Cap 7 days, 5 days left" in card
    # a bigger ask past the cap goes to staff with the arithmetic, never silently over
    as_user(ta).post(f"/c/{course.code}/extensions/{queued.pk}/decline/", {"comment": "One."})
    big = as_user(members[1]).post(
        f"/c/{course.code}/extensions/ask/",
        {"target": f"a{a3.pk}", "days": "6", "reason": "The whole cluster is gone for a week."},
    )
    assert big.status_code == 302
    r = ExtensionRequest.objects.get(status="open")
    assert r.relief_note == (
        f"A3 already has +2 days (group extension, approved {_day(rows[0], course)}): "
        "at most 7 days in all, so at most 5 days more."
    )
    denied = as_user(ta).post(f"/c/{course.code}/extensions/{r.pk}/approve/", {"days": "6"})
    assert denied.status_code == 302
    r.refresh_from_db()
    assert r.status == "open"  # refused: staff must confirm going past the cap
    assert _effective(as_user(members[1]), course.code, "A3") == a3.due_at + dt.timedelta(days=2)
    as_user(ta).post(f"/c/{course.code}/extensions/{r.pk}/approve/", {"days": "6", "over_cap": "1"})
    r.refresh_from_db()
    assert r.status == "approved"
    assert r.exception is not None
    assert r.exception.cap_days_confirmed == 8
    assert AuditEvent.objects.filter(action="relief.cap_overridden").count() == 1
    assert _effective(as_user(members[1]), course.code, "A3") == a3.due_at + dt.timedelta(days=8)
    # the others' deadlines stay at the cap's side of it: only their group's 2 days
    assert _effective(as_user(members[0]), course.code, "A3") == a3.due_at + dt.timedelta(days=2)


def _day(r: ExtensionRequest, course) -> str:  # type: ignore[no-untyped-def]
    import zoneinfo

    local = r.decided_at.astimezone(zoneinfo.ZoneInfo(course.timezone))  # type: ignore[union-attr]
    return f"{local:%b} {local.day}"


@pytest.mark.parametrize("policy", ["refund", "stack"])
def test_a_slack_day_then_an_extension_do_what_the_course_file_says(policy: str) -> None:
    course = CourseFactory(**EE290, relief_slack_with_extension=policy)
    a3 = AssignmentFactory(course=course, code="A3")
    ta = member(course, Role.TA)
    student05 = member(course, full_name="Student Five")
    me = as_user(student05)
    assert me.post(f"/c/{course.code}/slack/apply/", {"assignment": a3.pk}).status_code == 302
    assert _effective(me, course.code, "A3") == a3.due_at + dt.timedelta(days=1)
    me.post(
        f"/c/{course.code}/extensions/ask/",
        {"target": f"a{a3.pk}", "days": "2", "reason": "A conference talk on Thursday."},
    )
    r = ExtensionRequest.objects.get()
    assert (r.status, r.auto) == ("approved", True)
    balance = SlackAccount.objects.get(course=course, student=student05).balance
    card = as_user(ta).get(f"/c/{course.code}/extensions/?status=approved").content.decode()
    if policy == "refund":
        assert _effective(me, course.code, "A3") == a3.due_at + dt.timedelta(days=2)
        assert balance == 3  # the slack day came back
        refund = LedgerEntry.objects.get(kind="refund")
        assert f"extension request #{r.pk}" in refund.reason
        assert "Relief: +2 days (extension, approved" in card
        assert "(slack)" not in card
        assert "Cap 7 days, 5 days left" in card
        # and no slack on top of an extension in this course
        again = me.post(f"/c/{course.code}/slack/apply/", {"assignment": a3.pk}, follow=True)
        assert "slack days do not stack on an extension" in again.content.decode()
    else:
        assert _effective(me, course.code, "A3") == a3.due_at + dt.timedelta(days=3)
        assert balance == 2
        assert "Relief: +1 day (slack) and +2 days (extension, approved" in card
        assert "Cap 7 days, 4 days left" in card
    page = me.get(f"/c/{course.code}/slack/").content.decode()
    assert "Relief: " in page
    assert "days left" in page


def test_a_staff_grant_past_the_cap_needs_the_confirmation_and_is_audited() -> None:
    course = CourseFactory(**EE290, relief_accommodations_count=True)
    a1 = AssignmentFactory(course=course, code="A1")
    ta = member(course, Role.TA)
    ada = member(course, email="ada@uni.edu")
    staff = as_user(ta)
    url = f"/c/{course.code}/slack/staff/exceptions/grant/"
    staff.post(url, {"kind": "accommodation", "hours": "72", "emails": ada.email, "reason": "DSP"})
    over = staff.post(
        url,
        {
            "kind": "extension",
            "hours": "120",
            "assignment": a1.pk,
            "emails": ada.email,
            "reason": "Surgery.",
        },
        follow=True,
    ).content.decode()
    assert "A1 already has +3 days (accommodation, since" in over
    assert "at most 7 days in all, so at most 4 days more" in over
    assert DeadlineException.objects.filter(kind="extension").count() == 0
    staff.post(
        url,
        {
            "kind": "extension",
            "hours": "120",
            "assignment": a1.pk,
            "emails": ada.email,
            "reason": "Surgery.",
            "over_cap": "1",
        },
    )
    e = DeadlineException.objects.get(kind="extension")
    assert e.cap_days_confirmed == 8
    assert AuditEvent.objects.filter(action="relief.cap_overridden").exists()
    assert _effective(as_user(ada), course.code, "A1") == a1.due_at + dt.timedelta(days=8)


def test_the_course_file_declares_the_rule_and_can_say_todays_old_behaviour() -> None:
    from pathlib import Path

    from apps.core.coursefile import CourseFileError, parse_course_file
    from apps.setup.course_loader import course_load

    text = (Path(__file__).parents[2] / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8")
    course = course_load(cf=parse_course_file(text)).course
    assert (course.relief_cap_days, course.relief_slack_with_extension) == (7, "refund")
    assert (course.extension_auto_per_group, course.extension_auto_per_deadline) == (1, 1)
    old = text.replace(
        "relief: {cap_days: 7, slack_with_extension: refund, accommodations_count: true, "
        "over_cap: staff, auto_approve_per_group: 1, auto_approve_per_deadline: 1, "
        "group_request_closes_own: true}",
        "relief: {cap_days: null, slack_with_extension: stack, accommodations_count: false, "
        "auto_approve_per_group: null, auto_approve_per_deadline: null, "
        "group_request_closes_own: false}",
    )
    assert old != text
    course = course_load(cf=parse_course_file(old)).course
    assert course.relief_cap_days is None
    assert course.extension_auto_per_group is None
    with pytest.raises(CourseFileError, match="slack_with_extension"):
        parse_course_file(text.replace("slack_with_extension: refund", "slack_with_extension: x"))
