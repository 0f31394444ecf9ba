"""The API a student reads for their slack days and deadlines shows the same stack as their
slack page (#67): the relief in words, the deadline that counts in course time with the zone
named, the cap and what is left of it — and past the cap, held at it, both say so."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import Role
from apps.core.timefmt import format_instant
from apps.slackdays.services import exception_grant, slack_apply
from tests.factories import (
    AssignmentFactory,
    CourseFactory,
    GroupMembershipFactory,
    group_of,
    member,
)
from tests.test_api_twins import page_rows

pytestmark = pytest.mark.django_db


def test_a_students_stack_on_the_api_is_the_one_on_their_slack_page() -> None:
    course = CourseFactory(relief_cap_days=3, relief_slack_with_extension="stack")
    a = AssignmentFactory(course=course, code="A4", title="Serving")
    AssignmentFactory(course=course, code="A5", title="Untouched")
    staff = member(course, Role.TA)
    group = group_of(course, 2, name="Kappa")
    grant = {"actor": staff, "course": course, "kind": "extension", "assignment_id": a.pk}
    exception_grant(hours=48, reason="Outage.", group_id=group.pk, **grant)
    ada = member(course, full_name="Ada Lovelace")
    slack_apply(actor=ada, course=course, assignment_id=a.pk)
    exception_grant(hours=24, reason="Talk.", student_ids=[ada.pk], **grant)
    GroupMembershipFactory(group=group, user=ada)  # 1 + 1 + 2 days: past the cap of 3, held
    api = APIClient()
    api.force_authenticate(ada)
    me = api.get(f"/api/v1/courses/{course.code}/slack/me/").json()
    d = next(x for x in me["deadlines"] if x["assignment"] == "A4")
    assert d["slack_days"] == 1
    assert d["relief"].startswith("+1 day (slack), +2 days (group extension, approved ")
    assert " and +1 day (extension, approved " in d["relief"]
    assert (d["cap_days"], d["cap_left_hours"], d["cap_left"]) == (3, 0, "0 days")
    assert d["over_cap_hours"] == 24
    assert me["timezone"] == course.timezone
    assert d["effective_text"].endswith(("PST", "PDT"))
    page = Client()
    page.force_login(ada)
    html = page.get(f"/c/{course.code}/slack/").content.decode()
    row = " | ".join(
        next(r for r in page_rows(html, "Assignment deadlines") if r[0] == "A4 Serving")
    )
    assert f"Relief: {d['relief']}." in row
    assert d["effective_text"] in row
    assert format_instant(a.due_at, course.timezone) in row  # the base beside it
    assert "Cap 3 days, 0 days left." in row
    assert "1 day past the cap, held at it." in row
    untouched = next(x for x in me["deadlines"] if x["assignment"] == "A5")
    assert (untouched["relief"], untouched["cap_left"]) == ("no extra time", "3 days")
