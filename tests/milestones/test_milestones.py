"""Milestones per group: a member records a link, staff extend and excuse, the board shows it."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.test import Client

from apps.core.errors import DomainError, NotAllowed
from apps.core.models import AuditEvent, Role
from apps.milestones.models import GroupMilestone
from apps.milestones.services import milestone_excuse, milestone_extend, milestone_submit
from tests.factories import CourseFactory, MilestoneFactory, group_of, member

pytestmark = pytest.mark.django_db
DUE = dt.datetime(2026, 2, 13, 7, 59, tzinfo=dt.UTC)


def as_user(u):  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(u)
    return c


def setup():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    m = MilestoneFactory(course=course, key="hypothesis-v1", name="Hypothesis v1", due_at=DUE)
    on_time, late = group_of(course, 4, "Alpha"), group_of(course, 4, "Beta")
    staff = member(course, Role.TA)
    return course, m, on_time, late, staff


def cell_text(page: str, group: str) -> str:
    return page.split(f'<th scope="row">{group}</th>', 1)[1].split("</tr>", 1)[0]


def test_the_board_row_goes_from_not_submitted_to_submitted_and_late() -> None:
    course, m, alpha, beta, staff = setup()
    board = as_user(staff)
    with time_machine.travel(DUE - dt.timedelta(days=1), tick=False):
        page = board.get(f"/c/{course.code}/milestones/").content.decode()
        assert "not submitted" in cell_text(page, "Alpha")
        a_member = alpha.memberships.first().user
        r = as_user(a_member).post(
            f"/c/{course.code}/milestones/{m.pk}/submit/",
            {"link": "https://www.overleaf.com/read/abc", "ai_used": "no"},
        )
        assert r.status_code == 302
        page = board.get(f"/c/{course.code}/milestones/").content.decode()
        assert 'class="cell submitted"' in cell_text(page, "Alpha")
    with time_machine.travel(DUE + dt.timedelta(hours=2), tick=False):
        page = board.get(f"/c/{course.code}/milestones/").content.decode()
        assert "overdue" in cell_text(page, "Beta")
        # late ones first
        assert page.index('scope="row">Beta') < page.index('scope="row">Alpha')
        milestone_submit(
            actor=beta.memberships.first().user,
            course=course,
            milestone_id=m.pk,
            link="https://docs.google.com/document/d/x",
            ai_used=False,
        )
        page = board.get(f"/c/{course.code}/milestones/").content.decode()
        assert 'class="cell late"' in cell_text(page, "Beta")
        mine = (
            as_user(beta.memberships.first().user)
            .get(f"/c/{course.code}/milestones/")
            .content.decode()
        )
        assert 'data-status="late"' in mine


def test_an_extension_keeps_a_late_link_on_time_and_is_audited() -> None:
    course, m, alpha, _, staff = setup()
    milestone_extend(
        actor=staff,
        course=course,
        milestone_id=m.pk,
        group_id=alpha.pk,
        hours=48,
        reason="node down for two days",
    )
    with time_machine.travel(DUE + dt.timedelta(hours=30), tick=False):
        rec = milestone_submit(
            actor=alpha.memberships.first().user,
            course=course,
            milestone_id=m.pk,
            link="https://github.com/x/y/pull/1",
            ai_used=False,
        )
    assert rec.extension_hours == 48
    page = as_user(staff).get(f"/c/{course.code}/milestones/").content.decode()
    assert 'class="cell submitted"' in cell_text(page, "Alpha")
    assert "+48 h" in cell_text(page, "Alpha")
    event = AuditEvent.objects.get(action="milestone.extended")
    assert event.note == "node down for two days"
    assert event.after == {"extension_hours": 48}


def test_bad_input_is_refused_with_a_reason() -> None:
    course, m, alpha, _, staff = setup()
    student = alpha.memberships.first().user
    with pytest.raises(DomainError, match="https://"):
        milestone_submit(
            actor=student,
            course=course,
            milestone_id=m.pk,
            link="javascript:alert(1)",
            ai_used=False,
        )
    with pytest.raises(NotAllowed):
        milestone_extend(
            actor=student, course=course, milestone_id=m.pk, group_id=alpha.pk, hours=5, reason="x"
        )
    with pytest.raises(DomainError, match="why"):
        milestone_extend(
            actor=staff, course=course, milestone_id=m.pk, group_id=alpha.pk, hours=5, reason=" "
        )
    with pytest.raises(DomainError, match="0 to"):
        milestone_extend(
            actor=staff,
            course=course,
            milestone_id=m.pk,
            group_id=alpha.pk,
            hours=10**6,
            reason="x",
        )
    untracked = MilestoneFactory(course=course, key="group-formation", tracked=False)
    with pytest.raises(DomainError, match="date only"):
        milestone_submit(
            actor=student,
            course=course,
            milestone_id=untracked.pk,
            link="https://x.org/",
            ai_used=False,
        )
    response = as_user(student).post(
        f"/api/v1/courses/{course.code}/milestones/{m.pk}/submit/",
        {"link": "not a url", "ai_used": False},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["field"] == "link"


def test_excused_wins_and_the_csv_has_every_group_and_milestone() -> None:
    course, m, _, beta, staff = setup()
    MilestoneFactory(
        course=course, key="proposal", name="Proposal", due_at=DUE + dt.timedelta(days=14)
    )
    milestone_excuse(
        actor=staff,
        course=course,
        milestone_id=m.pk,
        group_id=beta.pk,
        excused=True,
        reason="joined late",
    )
    response = as_user(staff).get(f"/c/{course.code}/milestones/export.csv")
    lines = b"".join(response.streaming_content).decode().strip().splitlines()  # type: ignore[attr-defined]
    assert lines[0].startswith("group,milestone,status")
    assert len(lines) == 1 + 2 * 2
    assert any(line.startswith("Beta,Hypothesis v1,excused") for line in lines)


def test_a_student_sees_only_their_own_groups_row_by_page_and_api() -> None:
    course, m, alpha, beta, staff = setup()
    milestone_submit(
        actor=beta.memberships.first().user,
        course=course,
        milestone_id=m.pk,
        link="https://secret.example.org/beta-draft",
        ai_used=False,
    )
    a_student = as_user(alpha.memberships.first().user)
    page = a_student.get(f"/c/{course.code}/milestones/").content.decode()
    api = a_student.get(f"/api/v1/courses/{course.code}/milestones/").json()
    assert "beta-draft" not in page
    assert "beta-draft" not in str(api)
    assert [row["group_name"] for row in api["results"]] == ["Alpha"]
    staff_api = as_user(staff).get(f"/api/v1/courses/{course.code}/milestones/").json()
    assert {row["group_name"] for row in staff_api["results"]} == {"Alpha", "Beta"}


def test_staff_extend_and_excuse_from_the_board_form() -> None:
    """The board's one form posts to three actions (extend, excuse, take back); an unknown group
    is named in the message and changes nothing."""
    course, m, _, _, staff = setup()
    board = as_user(staff)
    url = f"/c/{course.code}/milestones/"
    form = {"milestone": m.pk, "group": "alpha", "hours": 12, "reason": "node-3 failed"}
    r = board.post(f"{url}extend/", form, follow=True)
    assert "Alpha: extension of 12 h saved." in r.content.decode()
    r = board.post(f"{url}excuse/", {**form, "group": "Nobody"}, follow=True)
    assert "No group named &#x27;Nobody&#x27; in this course." in r.content.decode()
    r = board.post(f"{url}excuse/", form, follow=True)
    assert "Alpha: excused." in r.content.decode()
    assert 'class="cell excused"' in cell_text(board.get(url).content.decode(), "Alpha")
    r = board.post(f"{url}unexcuse/", form, follow=True)
    assert "Alpha: no longer excused." in r.content.decode()


def test_a_link_declaring_ai_use_without_saying_what_is_refused_naming_the_field() -> None:
    course, m, alpha, _, staff = setup()
    student = alpha.memberships.first().user
    url = f"/c/{course.code}/milestones/{m.pk}/submit/"
    page = as_user(student).post(
        url, {"link": "https://github.com/alpha/report", "ai_used": "yes"}, follow=True
    )
    said = page.content.decode()
    assert "What was used: You answered yes: say which external code or AI assistants" in said
    api = as_user(student).post(
        f"/api/v1/courses/{course.code}/milestones/{m.pk}/submit/",
        {"link": "https://github.com/alpha/report", "ai_used": True, "ai_description": "  "},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert api.json()["field"] == "ai_description"
    unanswered = as_user(student).post(
        f"/api/v1/courses/{course.code}/milestones/{m.pk}/submit/",
        {"link": "https://github.com/alpha/report"},
        content_type="application/json",
    )
    assert unanswered.json()["field"] == "ai_used"
    assert not GroupMilestone.objects.filter(group=alpha, submitted_at__isnull=False).exists()
    # Declared: stored, shown on the staff board and in the export.
    as_user(student).post(
        url,
        {
            "link": "https://github.com/alpha/report",
            "ai_used": "yes",
            "ai_description": "Copilot for the plotting script",
        },
    )
    rec = GroupMilestone.objects.get(group=alpha, milestone=m)
    assert (rec.ai_used, rec.ai_description) == (True, "Copilot for the plotting script")
    assert (
        "Copilot for the plotting script"
        in as_user(staff).get(f"/c/{course.code}/milestones/").content.decode()
    )
    csv_text = b"".join(
        as_user(staff).get(f"/c/{course.code}/milestones/export.csv").streaming_content
    ).decode()
    assert "yes,Copilot for the plotting script" in csv_text


def test_a_refused_extension_marks_its_field_keeps_what_was_typed_and_links_from_the_summary() -> (
    None
):
    """After the redirect the board's form is bound again: the group field is aria-invalid and
    described by its own error, the other fields keep their values, and the error summary at
    the top links to the field."""
    import re

    course, m, _, _, staff = setup()
    board = as_user(staff)
    url = f"/c/{course.code}/milestones/"
    form = {"milestone": m.pk, "group": "Nobody", "hours": 12, "reason": "node-3 failed"}
    page = board.post(f"{url}extend/", form, follow=True).content.decode()
    group = re.search(r'<input[^>]*name="group"[^>]*>', page).group(0)
    assert 'aria-invalid="true"' in group
    assert "id_group_error" in group
    error = re.search(r'<ul class="errorlist"[^>]*id="id_group_error"[^>]*>(.*?)</ul>', page, re.S)
    assert error is not None
    assert "No group named" in error.group(1)
    assert re.search(r'<input[^>]*name="hours"[^>]*value="12"', page)
    assert 'id="error-summary"' in page
    assert '<a href="#id_group">No group named' in page
    page = board.post(f"{url}extend/", {**form, "group": "Alpha", "hours": "many"}, follow=True)
    hours = re.search(r'<input[^>]*name="hours"[^>]*>', page.content.decode()).group(0)
    assert 'aria-invalid="true"' in hours
    assert "Enter a whole number." in page.content.decode()
    fresh = board.get(url).content.decode()  # shown once: the next visit is a clean form
    assert 'aria-invalid="true"' not in fresh
