"""Pages: login by email, dashboards per role, scoping, password reset, query counts."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.core.models import Role
from tests.factories import (
    PASSWORD,
    AssignmentFactory,
    CourseFactory,
    LectureFactory,
    MilestoneFactory,
    member,
)

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_anonymous_visitors_are_sent_to_log_in(client: Client, ee290) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/c/ee290-sp26/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_log_in_with_email_in_any_case(client: Client, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    response = client.post(
        "/accounts/login/",
        {"username": "Student01@Example.EDU", "password": "courseops-demo"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/c/ee290-sp26/"
    assert "Ada Okafor" in response.content.decode()


def test_a_wrong_password_says_so(client: Client, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    response = client.post(
        "/accounts/login/", {"username": "student01@example.edu", "password": "nope"}
    )
    assert response.status_code == 200
    assert "enter a correct email address and password" in response.content.decode()


def test_student_dashboard_shows_every_deadline_in_pacific_time(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from apps.core.models import User

    student = User.objects.get(email="student03@example.edu")
    page = logged_in(student).get("/c/ee290-sp26/").content.decode()
    past = page[page.index("Past deadlines (") :]  # the demo term is over: all folded there
    for code in ("A1", "A2", "A3", "A4", "A5"):
        assert f"<td>{code} " in past
    assert "Tue Feb 10, 2026, 11:59 PM PST" in page  # A1, before daylight saving
    assert "Tue Apr 7, 2026, 11:59 PM PDT" in page  # A4, after 8 March
    assert "Group formation" in page
    assert "Thu Jan 29, 2026, 11:59 PM PST" in page
    assert "Impact update close" in page
    assert "Tensor Cores" in page  # student03 is in the first demo group
    assert 'id="panel-people"' not in page  # staff-only panel


def test_staff_dashboard_shows_people_groups_and_compute(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from apps.core.models import User

    for email in ("instructor@example.edu", "ta1@example.edu"):
        page = logged_in(User.objects.get(email=email)).get("/c/ee290-sp26/").content.decode()
        assert 'id="panel-people"' in page
        assert 'id="panel-groups-overview"' in page
        assert 'id="panel-compute-inventory"' in page
        assert re.search(r"<dt>Students</dt><dd>40</dd>", page)
        assert 'id="panel-my-group"' not in page


def test_another_course_is_not_found_not_forbidden() -> None:
    mine, theirs = CourseFactory(), CourseFactory()
    student = member(mine)
    client = logged_in(student)
    assert client.get(f"/c/{theirs.code}/").status_code == 404
    assert client.get(f"/c/{theirs.code}/schedule/").status_code == 404


def test_home_redirects_to_the_only_course_and_lists_several() -> None:
    one, two = CourseFactory(), CourseFactory()
    person = member(one, Role.STUDENT)
    assert logged_in(person).get("/")["Location"] == f"/c/{one.code}/"
    from tests.factories import MembershipFactory

    MembershipFactory(user=person, course=two, role=Role.TA)
    page = logged_in(person).get("/").content.decode()
    assert one.title in page
    assert two.title in page


def test_someone_in_no_course_is_told_what_to_do() -> None:
    from tests.factories import UserFactory

    page = logged_in(UserFactory()).get("/").content.decode()
    assert "not in any course yet" in page


def test_schedule_lists_lectures_and_recess(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from apps.core.models import User

    page = logged_in(User.objects.get(email="student01@example.edu")).get(
        "/c/ee290-sp26/schedule/", follow=True
    )
    assert page.redirect_chain[-1][0] == "/c/ee290-sp26/calendar/?view=list"
    text = page.content.decode()
    assert "L26" in text
    assert "Multi-Agent Systems and Architecture" in text
    assert "Spring Recess" in text
    assert "Tue Jan 20, 2026, 9:30 AM PST" in text


def test_password_reset_by_email_works_end_to_end(  # type: ignore[no-untyped-def]
    client: Client, celery_eager, django_capture_on_commit_callbacks
) -> None:
    from tests.factories import UserFactory

    user = UserFactory(email="lost@uni.example")
    with django_capture_on_commit_callbacks(execute=True):  # the worker's half, in-process
        client.post("/accounts/password/reset/", {"email": "Lost@Uni.example"})
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", mail.outbox[0].body)
    assert link is not None
    form = client.get(link.group(1), follow=True)
    response = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-new-long-passphrase", "new_password2": "a-new-long-passphrase"},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-new-long-passphrase")
    assert not user.check_password(PASSWORD)


@pytest.mark.parametrize("url_name", ["core:dashboard", "calendar:calendar"])
def test_page_queries_do_not_grow_with_the_calendar(url_name: str, settings) -> None:  # type: ignore[no-untyped-def]
    settings.COURSE_CACHE_SECONDS = 300  # as in production: the calendar rows come from the cache
    course = CourseFactory()
    student = member(course)
    client = logged_in(student)
    url = reverse(url_name, kwargs={"code": course.code})

    def queries() -> int:
        client.get(url)  # fills the course's calendar cache (emptied by every change below)
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    AssignmentFactory(course=course)
    MilestoneFactory(course=course)
    LectureFactory(course=course)
    small = queries()
    AssignmentFactory.create_batch(10, course=course)
    MilestoneFactory.create_batch(10, course=course)
    LectureFactory.create_batch(20, course=course)
    assert queries() == small
    # The first-glance cards share the student's deadlines with the deadlines panel (one
    # computation per request); the node card costs 1–2; the course's calendar rows come from
    # the cache (one read per request). Was 15 on the dashboard before the cache and the
    # one-query course lookup; 2 queries for slack instead of 5. Scribe duties and peer reviews
    # each add one query (the student's own rows), whatever the course's size. Checkoffs add the
    # "book a slot by" deadline (one query; on the calendar also the group's bookings) and, on the
    # dashboard, their panel (one query). The course-wide incidents (node down for everyone) add
    # one query to Today, and the student's extension requests answered this week one more.
    assert small <= {"core:dashboard": 15, "calendar:calendar": 12}[url_name], small


def test_the_student_dashboard_answers_the_first_questions_without_a_click(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Slack days left, the next deadline that counts for me (slack applied) on my list, my node
    and IP."""
    import datetime as dt

    from django.utils import timezone

    from apps.calendar.models import Assignment
    from apps.compute.models import Allocation
    from apps.core.models import User
    from apps.slackdays.services import slack_apply

    student = User.objects.get(email="student03@example.edu")
    a = Assignment.objects.filter(course=ee290_demo, code="A5").get()
    Assignment.objects.filter(pk=a.pk).update(due_at=timezone.now() + dt.timedelta(days=2))
    slack_apply(actor=student, course=ee290_demo, assignment_id=a.pk)
    allocation = Allocation.objects.get(group__memberships__user=student, ended_at__isnull=True)
    page = logged_in(student).get(f"/c/{ee290_demo.code}/").content.decode()
    glance = page[page.index('id="panel-glance-slack"') : page.index('id="panel-glance-node"')]
    assert "<strong>2</strong> of 3 slack days left" in glance
    todo = page[page.index('id="today"') : page.index('<div class="panels">')]
    a5 = re.search(rf'<li class="todo-item(?:(?!</li>).)*A5 {a.title}.*?</li>', todo, re.S)
    assert a5 is not None, todo  # the next deadline that counts for me is on my list, once
    assert "1 slack day(s) spent on it; 2 slack day(s) left" in a5.group(0)
    assert todo.count(f"A5 {a.title}") == 1
    node = page[page.index('id="panel-glance-node"') :]
    assert allocation.node.name in node
    login = re.sub(r"[^a-z0-9_-]", "_", student.email.split("@")[0].lower())
    assert re.search(rf"ssh {login}\d*@{re.escape(allocation.static_ip.address)}", node), node
    assert page.index('id="panel-glance-slack"') < page.index('id="panel-deadlines"')


def test_past_deadlines_fold_away_and_todays_stand_out() -> None:
    import datetime as dt
    import zoneinfo

    import time_machine

    noon = dt.datetime(2026, 3, 3, 12, 0, tzinfo=zoneinfo.ZoneInfo("America/Los_Angeles"))
    with time_machine.travel(noon, tick=False):
        course = CourseFactory()
        AssignmentFactory(
            course=course, code="A1", title="Old one", due_at=noon - dt.timedelta(days=3)
        )
        AssignmentFactory(
            course=course,
            code="A2",
            title="Due tonight",
            due_at=noon + dt.timedelta(hours=11, minutes=59),
        )
        AssignmentFactory(
            course=course, code="A3", title="Later", due_at=noon + dt.timedelta(days=9)
        )
        page = logged_in(member(course)).get(f"/c/{course.code}/").content.decode()
    ahead = page[
        page.index('aria-label="Assignments"') : page.index('aria-label="Project milestones"')
    ]
    assert "Old one" not in ahead
    assert "Later" in ahead
    folded = page[page.index("<details") :]
    assert "Past deadlines (1)" in folded
    assert "Old one" in folded
    tonight = ahead[ahead.index("Due tonight") : ahead.index("Later")]
    assert "due today" in tonight
    assert "due today" not in ahead[ahead.index("Later") :]
