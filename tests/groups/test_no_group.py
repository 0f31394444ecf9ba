"""A student in no group, as the pages that work per group meet them: while formation is open each
sends them to My group to join or start one; once groups are final none offers a join that My
group would refuse, and each says the staff place them. The forms ask nothing about a group they
do not have."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.core.models import User
from apps.extensions.models import ExtensionRequest
from tests.factories import (
    AssignmentFactory,
    GroupFactory,
    GroupMembershipFactory,
    MilestoneFactory,
    member,
    open_course,
)

pytestmark = pytest.mark.django_db
PER_GROUP = ("", "node/", "runs/", "milestones/", "impact/", "checkoffs/", "peer-review/")


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_while_formation_is_open_each_page_sends_them_to_join_with_the_deadline() -> None:
    course = open_course(code="open-sp26")
    client = as_user(member(course))
    for page in PER_GROUP:
        html = client.get(f"/c/{course.code}/{page}").content.decode()
        assert f'<a href="/c/{course.code}/group/">Join or start one</a> by ' in html, page
    assert "Join a group" in client.get(f"/c/{course.code}/group/").content.decode()


def test_once_groups_are_final_no_page_offers_a_join_and_each_says_staff_place_them() -> None:
    course = open_course(code="final-sp26")
    Milestone.objects.filter(course=course, key="group-formation").update(
        due_at=timezone.now() - dt.timedelta(days=1)
    )
    client = as_user(member(course))
    for page in PER_GROUP:
        html = client.get(f"/c/{course.code}/{page}").content.decode()
        assert "Join or start one" not in html, page
        assert "the course staff will place you" in html, page
    mine = client.get(f"/c/{course.code}/group/").content.decode()
    assert "Join a group" not in mine
    assert "the course staff will place you" in mine


def test_the_extension_form_offers_a_student_in_no_group_only_their_assignments() -> None:
    course = open_course(code="ext-sp26")
    a1 = AssignmentFactory(course=course, code="A1")
    proposal = MilestoneFactory(course=course, key="proposal", name="Project proposal")
    solo, ada = member(course), member(course)
    GroupMembershipFactory(group=GroupFactory(course=course), user=ada)

    grouped = as_user(ada).get(f"/c/{course.code}/extensions/").content.decode()
    assert f'value="m{proposal.pk}"' in grouped
    assert 'name="for_group"' in grouped

    client = as_user(solo)
    page = client.get(f"/c/{course.code}/extensions/").content.decode()
    assert f'value="a{a1.pk}"' in page
    assert f'value="m{proposal.pk}"' not in page
    assert 'name="for_group"' not in page
    # A milestone sent anyway is refused at the field, and nothing is stored.
    answer = client.post(
        f"/c/{course.code}/extensions/ask/",
        {"target": f"m{proposal.pk}", "days": "2", "reason": "Our node failed all week."},
    )
    assert answer.status_code == 400
    assert "Select a valid choice" in answer.content.decode()
    assert not ExtensionRequest.objects.filter(student=solo).exists()
    ok = client.post(
        f"/c/{course.code}/extensions/ask/",
        {"target": f"a{a1.pk}", "days": "2", "reason": "A conference trip that week."},
    )
    assert ok.status_code == 302
    assert ExtensionRequest.objects.get(student=solo).group is None


def test_scribe_preferences_ask_for_a_group_mode_only_of_a_student_in_a_group(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    grouped = User.objects.get(email="student01@example.edu")
    page = as_user(grouped).get(f"/c/{ee290_demo.code}/scribing/").content.decode()
    assert 'name="group_mode"' in page
    solo = member(ee290_demo)
    page = as_user(solo).get(f"/c/{ee290_demo.code}/scribing/").content.decode()
    assert "Save preferences" in page
    assert 'name="group_mode"' not in page
