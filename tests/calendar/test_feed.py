"""The personal iCal feed: content per role and per person, parsed back with icalendar."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import icalendar
import pytest
import time_machine
from django.test import Client

from apps.calendar.models import Assignment, Milestone
from apps.calendar.services import calendar_feed_get_or_create, calendar_feed_rotate
from apps.core.models import User
from apps.groups.models import Group
from apps.milestones.services import milestone_extend
from apps.slackdays.moves import assignment_update
from apps.slackdays.services import exception_grant
from tests.world import build_world

pytestmark = pytest.mark.django_db
LA = zoneinfo.ZoneInfo("America/Los_Angeles")


def feed_of(user: User, course) -> icalendar.Calendar:  # type: ignore[no-untyped-def]
    row = calendar_feed_get_or_create(actor=user, course=course)
    response = Client().get(f"/feeds/{row.feed_token}.ics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/calendar")
    return icalendar.Calendar.from_ical(response.content)


def events(cal: icalendar.Calendar) -> dict[str, icalendar.Event]:
    return {str(e["UID"]): e for e in cal.walk("VEVENT")}


def by_summary(cal: icalendar.Calendar, text: str) -> icalendar.Event:
    found = [e for e in cal.walk("VEVENT") if text in str(e["SUMMARY"])]
    assert len(found) == 1, f"{text!r}: {[str(e['SUMMARY']) for e in cal.walk('VEVENT')]}"
    return found[0]


def students_of(group: Group) -> list[User]:
    return [m.user for m in group.memberships.filter(left_at__isnull=True).order_by("user__email")]


def test_two_members_one_with_an_accommodation_get_a2_48_hours_apart(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    group = Group.objects.filter(course=course).order_by("name").first()
    assert group is not None
    plain, accommodated = students_of(group)[:2]
    exception_grant(
        actor=staff,
        course=course,
        kind="accommodation",
        hours=48,
        reason="DSP letter",
        student_ids=[accommodated.pk],
    )
    a2_plain = by_summary(feed_of(plain, course), "Due: A2 ")
    a2_acc = by_summary(feed_of(accommodated, course), "Due: A2 ")
    start_plain, start_acc = a2_plain.decoded("DTSTART"), a2_acc.decoded("DTSTART")
    assert start_acc - start_plain == dt.timedelta(hours=48)
    # each in course time, with the zone: 23:59 PST on Feb 24 and on Feb 26
    for ev, day in ((a2_plain, 24), (a2_acc, 26)):
        assert ev["DTSTART"].params["TZID"] == "America/Los_Angeles"
        local = ev.decoded("DTSTART")
        assert (local.month, local.day, local.hour, local.minute) == (2, day, 23, 59)
        assert local.tzname() == "PST"
    assert a2_plain["UID"] == a2_acc["UID"]


def test_every_event_has_uid_tzid_start_and_the_zone_is_described(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    cal = feed_of(student, course)
    assert [str(tz["TZID"]) for tz in cal.walk("VTIMEZONE")] == ["America/Los_Angeles"]
    vevents = cal.walk("VEVENT")
    assert len(vevents) > 26 + 5  # lectures, deadlines, events …
    uids = [str(e["UID"]) for e in vevents]
    assert len(uids) == len(set(uids))
    for e in vevents:
        assert "DTSTAMP" in e
        assert "SEQUENCE" in e
        start = e["DTSTART"]
        if isinstance(start.dt, dt.datetime):
            assert start.params["TZID"] == "America/Los_Angeles"
    summaries = [str(e["SUMMARY"]) for e in vevents]
    # events are not deadlines: the poster session and the presentations are not "Due:"
    assert any(s == "Poster session" for s in summaries)
    assert any(s.startswith("Final presentations, session A") for s in summaries)
    assert not any("Poster" in s and s.startswith("Due:") for s in summaries)
    assert "Due: A1 Parallelism Assignment" in summaries
    assert "Due: Hypothesis statement v1" in summaries
    assert any(s.startswith("Office hours") for s in summaries)


def test_staff_feed_holds_every_course_deadline(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    summaries = {str(e["SUMMARY"]) for e in feed_of(ta, course).walk("VEVENT")}
    for a in Assignment.objects.filter(course=course):
        assert f"Due: {a.code} {a.title}" in summaries
    for m in Milestone.objects.filter(course=course):
        assert f"Due: {m.name}" in summaries


def test_regenerate_kills_the_old_url_at_once_and_unknown_tokens_are_404(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    old = calendar_feed_get_or_create(actor=student, course=course).feed_token
    assert Client().get(f"/feeds/{old}.ics").status_code == 200
    new = calendar_feed_rotate(actor=student, course=course).feed_token
    assert new != old
    assert Client().get(f"/feeds/{old}.ics").status_code == 404
    assert Client().get(f"/feeds/{new}.ics").status_code == 200
    assert Client().get(f"/feeds/{new[:12]}wrong-secret-000.ics").status_code == 404
    assert Client().get("/feeds/nothing.ics").status_code == 404


def test_moving_a3_keeps_every_uid_and_bumps_its_sequence(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    student = User.objects.get(email="student01@example.edu")
    before = events(feed_of(student, course))
    a3 = Assignment.objects.get(course=course, code="A3")
    assignment_update(
        actor=staff,
        course=course,
        assignment_id=a3.pk,
        due_at=a3.due_at + dt.timedelta(days=2),
        confirm=True,
    )
    after = events(feed_of(student, course))
    assert set(before) == set(after)
    uid = next(u for u, e in after.items() if str(e["SUMMARY"]).startswith("Due: A3 "))
    assert after[uid]["SEQUENCE"] > before[uid]["SEQUENCE"]
    assert after[uid].decoded("DTSTART") - before[uid].decoded("DTSTART") == dt.timedelta(days=2)
    unchanged = next(u for u, e in after.items() if str(e["SUMMARY"]).startswith("Due: A2 "))
    assert after[unchanged]["SEQUENCE"] == before[unchanged]["SEQUENCE"]


def test_a_student_never_sees_another_groups_milestone_extension_or_window(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    world = build_world(ee290_demo)
    course = ee290_demo
    staff = User.objects.get(email="instructor@example.edu")
    m = Milestone.objects.get(course=course, key="proposal-v2")
    milestone_extend(
        actor=staff,
        course=course,
        milestone_id=m.pk,
        group_id=world.group_a.pk,
        hours=72,
        reason="node outage",
    )
    a_feed = feed_of(world.people["student_a"], course)  # type: ignore[arg-type]
    b_feed = feed_of(world.people["student_b"], course)  # type: ignore[arg-type]
    a_due = by_summary(a_feed, "Due: Project proposal v2").decoded("DTSTART")
    b_due = by_summary(b_feed, "Due: Project proposal v2").decoded("DTSTART")
    assert a_due - b_due == dt.timedelta(hours=72)
    b_text = (
        Client()
        .get(
            f"/feeds/{calendar_feed_get_or_create(actor=world.people['student_b'], course=course).feed_token}.ics"  # type: ignore[arg-type]
        )
        .content.decode()
    )
    assert world.group_a.name not in b_text
    assert "Multi-node window" in a_feed.to_ical().decode()
    assert "Multi-node window" not in b_text


def test_a_dropped_student_s_feed_stops(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student02@example.edu")
    token = calendar_feed_get_or_create(actor=student, course=course).feed_token
    course.memberships.filter(user=student).update(is_active=False)
    assert Client().get(f"/feeds/{token}.ics").status_code == 404


@time_machine.travel(dt.datetime(2026, 2, 1, 12, tzinfo=dt.UTC), tick=False)
def test_the_calendar_api_returns_the_same_events_and_filters_by_date(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    client = Client()
    client.force_login(student)
    everything = client.get(f"/api/v1/courses/{course.code}/calendar/").json()
    feed_uids = set(events(feed_of(student, course)))
    assert {e["uid"] for e in everything} == feed_uids
    week = client.get(
        f"/api/v1/courses/{course.code}/calendar/?from=2026-02-09&to=2026-02-16"
    ).json()
    assert {e["code"] for e in week if e["is_deadline"]} == {"A1", "hypothesis-v1"}
    assert all(e["start"] < "2026-02-16T08:00:00Z" for e in week)
    bad = client.get(f"/api/v1/courses/{course.code}/calendar/?from=yesterday")
    assert bad.status_code == 400
    assert bad.json()["field"] == "from"
