"""Staff move deadlines: the impact first, then confirm; audited; everyone affected e-mailed once."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core import mail
from django.test import Client

from apps.calendar.models import Assignment, Lecture, Milestone
from apps.core.models import AuditEvent, User
from apps.groups.models import Group
from apps.slackdays.services import exception_grant, slack_apply

pytestmark = pytest.mark.django_db
NOW = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)  # before A3 (due Mar 10)


def client_for(email: str) -> Client:
    c = Client()
    c.force_login(User.objects.get(email=email))
    return c


@time_machine.travel(NOW, tick=False)
def test_the_edit_page_shows_who_is_affected_before_anything_moves(
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = client_for("instructor@example.edu")
    a3 = Assignment.objects.get(course=course, code="A3")
    group = Group.objects.filter(course=course).order_by("name").first()
    member = group.memberships.order_by("user__email").first().user  # type: ignore[union-attr]
    slack_apply(actor=member, course=course, assignment_id=a3.pk)  # the whole group: +1 day
    url = f"/c/{course.code}/calendar/assignments/{a3.pk}/edit/"
    form = {"title": a3.title, "release_at": "2026-02-24T00:00", "due_at": "2026-03-12T23:59"}
    preview = staff.post(url, form).content.decode()
    assert Assignment.objects.get(pk=a3.pk).due_at == a3.due_at  # nothing moved yet
    assert '<p id="affected-count"><strong>40</strong> students' in preview
    assert "slack day(s) become moot" in preview
    assert "(2 days later)" in preview  # 2 days later beats the 1 slack day
    assert member.get_full_name() in preview
    assert "Move it and e-mail 40 people" in preview
    assert len(mail.outbox) == 0
    with django_capture_on_commit_callbacks(execute=True):
        done = staff.post(url, {**form, "confirm": "1"})
    assert done.status_code == 302
    moved = Assignment.objects.get(pk=a3.pk)
    assert moved.due_at == dt.datetime(2026, 3, 13, 6, 59, tzinfo=dt.UTC)  # 23:59 PDT
    assert moved.revision == a3.revision + 1
    assert len(mail.outbox) == 40  # one each
    assert len({m.to[0] for m in mail.outbox}) == 40
    to_member = next(m for m in mail.outbox if m.to == [member.email])
    assert "Fri Mar 13, 2026, 11:59 PM PDT" in to_member.body  # their own: +1 slack day
    event = AuditEvent.objects.get(action="assignment.updated")
    assert event.before["due_at"] != event.after["due_at"]  # type: ignore[index]
    assert event.note == "40 students affected"


@time_machine.travel(NOW, tick=False)
def test_the_api_wants_confirm_to_move_and_shows_the_impact_first(
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = client_for("instructor@example.edu")
    a4 = Assignment.objects.get(course=course, code="A4")
    somebody = User.objects.get(email="student07@example.edu")
    exception_grant(
        actor=User.objects.get(email="instructor@example.edu"),
        course=course,
        kind="extension",
        hours=24,
        reason="conference",
        assignment_id=a4.pk,
        student_ids=[somebody.pk],
    )
    base = f"/api/v1/courses/{course.code}/calendar/assignments/{a4.pk}/"
    new = "2026-04-09T23:59:00-07:00"
    impact = staff.get(base + "impact/", {"due_at": new}).json()
    assert impact["people"] == 40
    assert [p["email"] for p in impact["special"]] == [somebody.email]
    assert impact["special"][0]["new"] == "2026-04-11T06:59:00Z"  # +24 h extension follows the base
    refused = staff.patch(base, {"due_at": new}, content_type="application/json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "confirm"
    assert "40 students" in refused.json()["detail"]
    assert len(mail.outbox) == 0
    with django_capture_on_commit_callbacks(execute=True):
        ok = staff.patch(base, {"due_at": new, "confirm": True}, content_type="application/json")
    assert ok.status_code == 200
    assert ok.json()["due_at"] == "2026-04-10T06:59:00Z"
    assert len(mail.outbox) == 40
    student = client_for("student01@example.edu")
    assert student.patch(base, {"title": "x"}, content_type="application/json").status_code == 403
    bad = staff.patch(
        base, {"due_at": "2026-03-01T00:00:00Z", "confirm": True}, content_type="application/json"
    )
    assert bad.status_code == 400  # before its release


@time_machine.travel(NOW, tick=False)
def test_moving_a_milestone_and_a_lecture(
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = client_for("ta1@example.edu")
    m = Milestone.objects.get(course=course, key="draft-report")
    base = f"/api/v1/courses/{course.code}/calendar/milestones/{m.pk}/"
    impact = staff.get(base + "impact/", {"due_at": "2026-04-28T23:59:00-07:00"}).json()
    assert (impact["people"], impact["groups"]) == (40, 8)
    with django_capture_on_commit_callbacks(execute=True):
        ok = staff.patch(
            base,
            {"due_at": "2026-04-28T23:59:00-07:00", "confirm": True},
            content_type="application/json",
        )
    assert ok.status_code == 200
    assert len(mail.outbox) == 40
    lec = Lecture.objects.get(course=course, number=18)
    r = staff.patch(
        f"/api/v1/courses/{course.code}/calendar/lectures/{lec.pk}/",
        {"date": "2026-03-20", "title": "Inference frameworks"},
        content_type="application/json",
    )
    assert r.status_code == 200
    moved = Lecture.objects.get(pk=lec.pk)
    assert moved.title == "Inference frameworks"
    assert moved.starts_at == dt.datetime(2026, 3, 20, 16, 30, tzinfo=dt.UTC)  # 9:30 PDT
    recess = staff.patch(
        f"/api/v1/courses/{course.code}/calendar/lectures/{lec.pk}/",
        {"date": "2026-03-24"},
        content_type="application/json",
    )
    assert recess.status_code == 400
    assert "recess" in recess.json()["detail"]


def test_feed_settings_through_the_api(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = client_for("student01@example.edu")
    base = f"/api/v1/courses/{course.code}/calendar/feed/"
    assert student.get(base).json()["url"] is None
    first = student.post(base + "rotate/").json()["url"]
    assert first.startswith("http://testserver/feeds/")
    assert Client().get(first.removeprefix("http://testserver")).status_code == 200
    second = student.post(base + "rotate/").json()["url"]
    assert Client().get(first.removeprefix("http://testserver")).status_code == 404
    off = student.patch(base, {"reminders_off": ["milestone"]}, content_type="application/json")
    assert off.json()["reminders_off"] == ["milestone"]
    wrong = student.patch(base, {"reminders_off": ["everything"]}, content_type="application/json")
    assert wrong.status_code == 400
    assert student.delete(base).json()["url"] is None
    assert Client().get(second.removeprefix("http://testserver")).status_code == 404


@time_machine.travel(dt.datetime(2026, 2, 8, 18, tzinfo=dt.UTC), tick=False)
def test_the_dashboard_says_what_is_due_in_the_next_7_days_and_who_teaches(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    page = client_for("student01@example.edu").get("/c/ee290-sp26/").content.decode()
    week = page.split('id="today"', 1)[1].split("</section>", 1)[0]  # a student's week: Today
    assert "A1 Parallelism Assignment" in week
    from apps.milestones.models import GroupMilestone

    recorded = GroupMilestone.objects.filter(
        group__memberships__user__email="student01@example.edu",
        milestone__key="hypothesis-v1",
        submitted_at__isnull=False,
    ).exists()
    # Feb 12: on the list while the group has not recorded it; once recorded it is done
    assert ("Hypothesis statement v1" in week) is not recorded
    assert "A2" not in week  # Feb 24
    about = page.split('id="panel-about"', 1)[1].split("</section>", 1)[0]
    assert "Jiantao Jiao, Anant Sahai" in about
    assert "Tuesdays, 11:00 AM–12:00 PM PST" in about
    assert "Gradescope (submissions)" in about
    staff_page = client_for("ta1@example.edu").get("/c/ee290-sp26/").content.decode()
    staff_week = staff_page.split('id="panel-next-7-days"', 1)[1]
    assert "A1 Parallelism Assignment" in staff_week
    assert "Hypothesis statement v1" in staff_week


@time_machine.travel(dt.datetime(2026, 2, 8, 18, tzinfo=dt.UTC), tick=False)
def test_the_calendar_page_month_and_list(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    student = client_for("student01@example.edu")
    month = student.get("/c/ee290-sp26/calendar/").content.decode()
    assert "February 2026" in month
    assert 'class="chip kind-assignment due"' in month
    assert "Make my feed address" in month
    march = student.get("/c/ee290-sp26/calendar/?month=2026-03").content.decode()
    assert "Spring Recess" in march
    for bad in ("9999-12", "0000-01", "2026-13", "abc", "2026", "-1-5"):
        assert student.get(f"/c/ee290-sp26/calendar/?month={bad}").status_code == 200, bad
    listing = student.get("/c/ee290-sp26/calendar/?view=list").content.decode()
    assert "Poster session" in listing
    assert "Edit" not in listing.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    staff_list = (
        client_for("instructor@example.edu")
        .get("/c/ee290-sp26/calendar/?view=list")
        .content.decode()
    )
    assert "/calendar/assignments/" in staff_list
    assert "/calendar/lectures/" in staff_list
    student.post("/c/ee290-sp26/calendar/feed/create/")
    page = student.get("/c/ee290-sp26/calendar/").content.decode()
    assert 'id="feed-url"' in page
    assert "/feeds/" in page


def test_a_deadline_at_the_end_of_the_calendar_is_refused_at_its_field(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """9999-12-31 23:59 is a valid date, but not in UTC: it answered 500 before."""
    course = ee290_demo
    staff = client_for("instructor@example.edu")
    a3 = Assignment.objects.get(course=course, code="A3")
    url = f"/c/{course.code}/calendar/assignments/{a3.pk}/edit/"
    form = {"title": a3.title, "release_at": "2026-02-24T00:00", "due_at": "9999-12-31T23:59"}
    page = staff.post(url, form)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="id_due_at_error">Give a date between the years 2000 and 2100.' in html
    assert 'aria-invalid="true"' in html
    assert Assignment.objects.get(pk=a3.pk).due_at == a3.due_at


def test_the_api_refuses_a_deadline_no_course_holds_so_no_page_breaks(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """One PATCH of A3 to 9999-12-31 23:59 UTC was stored, and then every student's Today, slack
    page, calendar and slack API answered 500 (a slack day added to it overflows)."""
    from rest_framework.test import APIClient

    course = ee290_demo
    api = APIClient()
    api.force_authenticate(User.objects.get(email="instructor@example.edu"))
    a3 = Assignment.objects.get(course=course, code="A3")
    url = f"/api/v1/courses/{course.code}/calendar/assignments/{a3.pk}/"
    bad = api.patch(url, {"due_at": "9999-12-31T23:59:59Z", "confirm": True}, format="json")
    assert bad.status_code == 400
    assert bad.json()["errors"]["due_at"] == ["Give a date between the years 2000 and 2100."]
    assert api.get(f"{url}impact/", {"due_at": "9999-12-31T23:59:59Z"}).status_code == 400
    assert Assignment.objects.get(pk=a3.pk).due_at == a3.due_at
    student = client_for("student01@example.edu")
    for page in ("", "slack/", "calendar/"):
        assert student.get(f"/c/{course.code}/{page}").status_code == 200, page
