"""Declared sources: a milestone can ask each group for a sources and AI-use statement (what was
used, where); students give it when they record the milestone, and staff read it beside the
similarity result of that group."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.models import Role
from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile
from apps.milestones.models import GroupMilestone
from tests.factories import (
    CourseFactory,
    GroupFactory,
    GroupMembershipFactory,
    MilestoneFactory,
    member,
)

pytestmark = pytest.mark.django_db
STATEMENT = "ChatGPT drafted section 3; train.py adapted from the nanoGPT repository"


@pytest.fixture
def setup() -> dict:  # type: ignore[type-arg]
    course = CourseFactory()
    m = MilestoneFactory(
        course=course, key="a2", name="A2 code", due_at=timezone.now() + dt.timedelta(days=3)
    )
    a, b = GroupFactory(course=course, name="Alpha"), GroupFactory(course=course, name="Bravo")
    sa, sb = member(course), member(course)
    GroupMembershipFactory(group=a, user=sa)
    GroupMembershipFactory(group=b, user=sb)
    return {
        "course": course,
        "m": m,
        "a": a,
        "b": b,
        "sa": sa,
        "sb": sb,
        "ta": member(course, Role.TA),
    }


def _as(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def test_staff_ask_for_a_statement_and_a_student_without_one_is_refused(setup) -> None:  # type: ignore[no-untyped-def]
    course, m = setup["course"], setup["m"]
    student = _as(setup["sa"])
    assert (
        student.post(f"/c/{course.code}/milestones/{m.pk}/sources/", {"required": "1"}).status_code
        == 403
    )
    sent = _as(setup["ta"]).post(f"/c/{course.code}/milestones/{m.pk}/sources/", {"required": "1"})
    assert sent.status_code == 302
    m.refresh_from_db()
    assert m.sources_required
    page = student.get(f"/c/{course.code}/milestones/").content.decode()
    assert "Sources and AI use (required)" in page
    form = {"link": "https://example.edu/a2", "ai_used": "no"}
    refused = student.post(f"/c/{course.code}/milestones/{m.pk}/submit/", form, follow=True)
    assert "asks for a sources and AI-use statement" in refused.content.decode()
    assert not GroupMilestone.objects.filter(milestone=m, submitted_at__isnull=False).exists()
    student.post(f"/c/{course.code}/milestones/{m.pk}/submit/", {**form, "sources": STATEMENT})
    rec = GroupMilestone.objects.get(milestone=m, group=setup["a"])
    assert rec.sources == STATEMENT
    # the API asks the same and gives it back
    api = APIClient()
    api.force_authenticate(setup["sb"])
    url = f"/api/v1/courses/{course.code}/milestones/{m.pk}/submit/"
    no = api.post(url, {"link": "https://example.edu/b", "ai_used": False}, format="json")
    assert no.status_code == 400
    assert "sources and AI-use statement" in no.content.decode()
    yes = api.post(
        url, {"link": "https://example.edu/b", "ai_used": False, "sources": "none"}, format="json"
    )
    assert yes.status_code == 200, yes.content
    assert yes.json()["sources"] == "none"
    board = api.get(f"/api/v1/courses/{course.code}/milestones/").json()
    cell = board["results"][0]["milestones"][0]
    assert (cell["sources_required"], cell["sources"]) == (True, "none")


def test_staff_read_each_groups_statement_beside_the_similarity_pair(setup) -> None:  # type: ignore[no-untyped-def]
    course, m = setup["course"], setup["m"]
    GroupMilestone.objects.create(
        course=course,
        milestone=m,
        group=setup["a"],
        sources=STATEMENT,
        ai_used=True,
        ai_description="ChatGPT",
    )
    check = SimilarityCheck.objects.create(
        course=course,
        title="A2",
        source="folders",
        status="done",
        inputs_hash="c" * 64,
        milestone=m,
    )
    fa, fb = (
        SubmittedFile.objects.create(
            check_run=check,
            group=g,
            submission=g.name,
            path="t.py",
            kind="code",
            language="python",
            sha256="0" * 64,
            text="x = 1\n",
        )
        for g in (setup["a"], setup["b"])
    )
    pair = SimilarityPair.objects.create(
        check_run=check,
        group_a=setup["a"],
        group_b=setup["b"],
        percent=0.9,
        percent_a=0.9,
        percent_b=0.8,
        file_a=fa,
        file_b=fb,
        files=[
            {
                "file_a": fa.pk,
                "file_b": fb.pk,
                "percent_a": 0.9,
                "percent_b": 0.8,
                "slices_a": [[0, 5]],
                "slices_b": [[0, 5]],
            }
        ],
    )
    page = _as(setup["ta"]).get(f"/c/{course.code}/integrity/{check.pk}/pairs/{pair.pk}/")
    html = page.content.decode()
    assert "Alpha: declared sources" in html
    assert "train.py adapted from the nanoGPT repository" in html
    assert "Nothing recorded for A2 code." in html  # Bravo recorded nothing
    api = APIClient()
    api.force_authenticate(setup["ta"])
    body = api.get(f"/api/v1/courses/{course.code}/similarity/{check.pk}/pairs/{pair.pk}/").json()
    assert body["declared_a"]["sources"] == STATEMENT
    assert body["declared_b"] is None
