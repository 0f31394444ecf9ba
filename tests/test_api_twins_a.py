"""What the twins of tests/api_twins_a.py compare, spelled out once for a student: every time
the APIs newly give is in the course's zone and names it, as the pages write it."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from tests.test_api_twins import _get_all, _state
from tests.world import build_world

pytestmark = pytest.mark.django_db

ZONE = ("PST", "PDT")
OFFSET = re.compile(r"[-+]\d\d:\d\d$")


def test_the_list_apis_give_a_students_times_in_course_time_naming_the_zone(
    ee290_demo, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    world = build_world(ee290_demo)
    _state(world)
    tz = world.course.timezone
    api = APIClient()
    api.force_authenticate(world.people["student_a"])
    a = f"/api/v1/courses/{world.course.code}/"

    slack = api.get(a + "slack/me/").json()["deadlines"]
    moved = [d for d in slack if d["extension_hours"]]
    assert moved, "student A's extension moves a deadline"
    assert all(d["timezone"] == tz for d in slack)
    assert all(d["effective_text"].endswith(ZONE) for d in slack)
    assert moved[0]["effective_text"] != moved[0]["base_text"]

    groups = _get_all(api, a + "milestones/")
    assert all(g["timezone"] == tz for g in groups)
    cells = [c for g in groups for c in g["milestones"]]
    assert cells
    assert all(c["due_text"].endswith(ZONE) for c in cells)
    assert any(c["status_label"] == "overdue" for c in cells)
    assert any(c["submitted_text"] and c["submitted_by_name"] for c in cells)

    duties = _get_all(api, a + "scribing/duties/")
    assert duties
    assert all(d["due_text"].endswith(ZONE) for d in duties)
    assert all(OFFSET.search(d["lecture_starts_at"]) for d in duties)

    sets = api.get(a + "checkoffs/sets/").json()
    booked = [s["booking"] for s in sets if s["booking"]]
    assert booked, "student A's group holds a checkoff booking"
    assert all(b["starts_text"].endswith(ZONE) and OFFSET.search(b["starts_at"]) for b in booked)
    assert all(s["booked"] is None for s in sets), "counts are staff's"

    events = api.get(a + "calendar/").json()
    timed = [e for e in events if not e["all_day"]]
    assert timed
    assert all(e["start_text"].endswith(ZONE) for e in timed)

    labs = api.get(a + "labs/").json()
    assert labs
    assert all(lab["timezone"] == tz and lab["steps_done"] is not None for lab in labs)
    assert all(lab["opens_text"].endswith(ZONE) for lab in labs if lab["opens_at"])
