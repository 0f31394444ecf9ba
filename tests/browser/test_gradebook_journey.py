"""Gradebook and group suggestions in a real browser: a TA scores a group and one student, the
student sees why the grade is an F and asks what they need; staff suggest groups from the
questionnaire and accept them."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from apps.core.coursefile import parse_course_file
from apps.core.models import Role
from apps.groups.models import GroupMembership
from apps.onboarding import services as onboarding
from apps.setup.course_loader import course_load
from tests.browser.conftest import log_in, open_from_menu
from tests.conftest import COURSE_FILE
from tests.factories import PASSWORD, group_of, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _course():  # type: ignore[no-untyped-def]
    cf = parse_course_file(COURSE_FILE.read_text(encoding="utf-8"))
    return course_load(cf=cf.model_copy(update={"compute": None})).course


def test_a_ta_enters_scores_and_the_student_sees_why_and_what_is_needed(page, live_server) -> None:  # type: ignore[no-untyped-def]
    course = _course()
    group = group_of(course, 4, "Alpha")
    student = group.memberships.first().user
    ta = member(course, Role.TA)
    for u in (student, ta):
        u.set_password(PASSWORD)
        u.save()
    log_in(page, live_server, ta.email, PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/gradebook/")
    for component, target, score in (
        ("project-technical", "group", "17/20"),
        ("scribing", "student", "40"),
    ):
        page.select_option("#id_component", component)
        if target == "group":
            page.select_option("#id_group", label="Alpha")
        else:
            page.fill("#id_student", student.email)
        page.fill("#id_percent", score)
        page.get_by_role("button", name="Save the score").click()
        page.wait_for_load_state("networkidle")
        assert (
            page.get_by_text(
                "Technical quality for group Alpha: 85 %" if target == "group" else "40 %"
            ).count()
            >= 1
        )
    risk = page.get_by_role("region", name="At risk: 1 of 4").inner_text()
    assert "Scribing (2 lectures per student) is 40 %, below the satisfactory 60 %" in risk
    page.context.clear_cookies()
    log_in(page, live_server, student.email, PASSWORD)
    open_from_menu(page, "Grades", "Grades")
    text = page.locator("main").inner_text()
    assert "At risk: Scribing (2 lectures per student) is 40 %" in text
    page.select_option("#target", "B")
    page.get_by_role("button", name="Show").click()
    assert (
        "Not while Scribing (2 lectures per student) is 40 %" in page.locator("main").inner_text()
    )


def test_staff_suggest_groups_from_the_questionnaire_and_accept_them(page, live_server) -> None:  # type: ignore[no-untyped-def]
    course = _course()
    staff = member(course, Role.INSTRUCTOR)
    staff.set_password(PASSWORD)
    staff.save()
    students = [member(course, full_name=f"Student {i:02d}") for i in range(10)]
    onboarding.questionnaire_setup(actor=staff, course=course)
    with time_machine.travel(dt.datetime(2026, 1, 21, 18, tzinfo=dt.UTC), tick=False):
        for i, s in enumerate(students):
            mate = students[i ^ 1].email  # 0↔1, 2↔3, …: five mutual pairs
            onboarding.response_save(
                actor=s,
                course=course,
                raw={
                    "interests": ["Optimizers"],
                    "hours": "8–12",
                    "gpu": "3",
                    "distributed": "2",
                    "teammates": mate,
                },
            )
    log_in(page, live_server, staff.email, PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/questionnaire/suggestions/")
    page.get_by_role("button", name="Suggest groups").click()
    page.wait_for_load_state("networkidle")
    assert "mutual wishes kept: 5 of 5" in page.locator("main").inner_text()
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Accept: create these groups").click()
    page.wait_for_load_state("networkidle")
    assert "groups now exist" in page.locator("main").inner_text()
    where = dict(
        GroupMembership.objects.filter(course=course, left_at__isnull=True).values_list(
            "user_id", "group_id"
        )
    )
    assert len(where) == 10
    assert all(where[students[i].pk] == where[students[i ^ 1].pk] for i in range(10))
