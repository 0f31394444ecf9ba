"""Impact evidence: a group records it until the update closes, staff score it, the gradebook
reads the group's score."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from rest_framework.test import APIClient

from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import AuditEvent, User
from apps.gradebook import selectors as gradebook
from apps.groups.models import Group
from apps.impact import rules, services

pytestmark = pytest.mark.django_db
BEFORE_CLOSE = dt.datetime(2026, 5, 1, 12, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://github.com/vllm-project/vllm/pull/12345", None),
        ("https://arxiv.org/abs/2605.01234", None),
        ("ftp://example.org/x", "must start with https://"),
        ("https://10.0.0.1/metrics", "not an IP address"),
        ("http://localhost:8000/", "not a public host name"),
        ("https://intranet/report", "not a public host name"),
        ("https://example.org/a b", "no spaces"),
        ("javascript:alert(1)", "must start with https://"),
        ("", "Give the link"),
    ],
)
def test_urls_are_checked_for_form_only(url: str, problem: str | None) -> None:
    got = rules.url_problem(url)
    assert (got is None) if problem is None else (got is not None and problem in got)


def _people(course):  # type: ignore[no-untyped-def]
    groups = list(Group.objects.filter(course=course).order_by("name"))
    a = groups[0].memberships.filter(left_at__isnull=True).first().user
    b = groups[1].memberships.filter(left_at__isnull=True).first().user
    return groups, a, b, User.objects.get(email="ta1@example.edu")


@time_machine.travel(BEFORE_CLOSE, tick=False)
def test_a_group_records_evidence_and_another_group_cannot_touch_it(ee290_demo) -> None:
    course = ee290_demo
    groups, a, b, ta = _people(course)
    item = services.item_add(
        actor=a,
        course=course,
        kind="merged-pr",
        url="https://github.com/org/repo/pull/1",
        happened_on=dt.date(2026, 4, 20),
        claim="Our kernel landed upstream.",
        ai_used=False,
    )
    assert item.group == groups[0]
    with pytest.raises(DomainError, match="https://"):
        services.item_add(
            actor=a,
            course=course,
            kind="report",
            url="file:///etc/passwd",
            happened_on=dt.date(2026, 4, 20),
            claim="x",
            ai_used=False,
        )
    with pytest.raises(NotFound):
        services.item_remove(actor=b, course=course, item_id=item.pk)
    with pytest.raises(NotAllowed):
        services.item_add(
            actor=ta,
            course=course,
            kind="report",
            url="https://example.org/r",
            happened_on=dt.date(2026, 4, 20),
            claim="x",
            ai_used=False,
        )
    b_view = APIClient()
    b_view.force_authenticate(b)
    assert b_view.get(f"/api/v1/courses/{course.code}/impact/items/").json()["count"] == 0


def test_after_the_impact_update_closes_students_cannot_add(ee290_demo) -> None:
    course = ee290_demo
    _, a, _, _ = _people(course)
    with (
        time_machine.travel(dt.datetime(2026, 5, 20, tzinfo=dt.UTC), tick=False),
        pytest.raises(Conflict, match="impact update closed Fri May 15"),
    ):
        services.item_add(
            actor=a,
            course=course,
            kind="arxiv",
            url="https://arxiv.org/abs/2605.1",
            happened_on=dt.date(2026, 5, 16),
            claim="Preprint.",
            ai_used=False,
        )


def test_staff_score_feeds_the_gradebook_and_is_audited(ee290_demo) -> None:
    course = ee290_demo
    groups, a, _, ta = _people(course)
    assert (
        gradebook.gradebook_rows(course, student_ids=[a.pk])[0].cells["project-impact"].percent
        is None
    )
    services.group_score(
        actor=ta, course=course, group_id=groups[0].pk, percent="80", note="merged PR + preprint"
    )
    cell = gradebook.gradebook_rows(course, student_ids=[a.pk])[0].cells["project-impact"]
    assert (cell.percent, cell.origin) == (80.0, "impact")
    with pytest.raises(DomainError, match="outside 0–100"):
        services.group_score(actor=ta, course=course, group_id=groups[0].pk, percent="120")
    with pytest.raises(NotAllowed):
        services.group_score(actor=a, course=course, group_id=groups[0].pk, percent="100")
    services.group_score(actor=ta, course=course, group_id=groups[0].pk, percent=None)
    events = AuditEvent.objects.filter(action="impact.group_scored").order_by("id")
    assert [(e.before["percent"], e.after["percent"]) for e in events] == [
        (None, 80.0),
        (80.0, None),
    ]


@time_machine.travel(BEFORE_CLOSE, tick=False)
def test_the_page_adds_removes_and_scores_each_through_its_own_action(ee290_demo) -> None:
    """As the people would: a bad link comes back on the form with nothing saved; a good one is
    recorded and removed again; staff score an item and a group and land on the filtered list."""
    from django.test import Client

    from apps.impact.models import GroupImpact, ImpactItem

    course = ee290_demo
    groups, a, _, ta = _people(course)
    student, staff = Client(), Client()
    student.force_login(a)
    staff.force_login(ta)
    url = f"/c/{course.code}/impact/"
    form = {
        "kind": "merged-pr",
        "url": "file:///etc/passwd",
        "happened_on": "2026-04-20",
        "claim": "Our kernel landed upstream.",
        "ai_used": "no",
    }
    before = ImpactItem.objects.count()
    page = student.post(f"{url}items/add/", form)
    assert page.status_code == 200
    assert ImpactItem.objects.count() == before
    r = student.post(
        f"{url}items/add/", {**form, "url": "https://github.com/org/repo/pull/1"}, follow=True
    )
    assert "Evidence recorded for your group." in r.content.decode()
    item = ImpactItem.objects.latest("pk")
    r = staff.post(f"{url}items/{item.pk}/score/", {"score": "80", "note": "", "back": "q=Team"})
    assert r["Location"] == f"{url}?q=Team"
    staff.post(f"{url}groups/{groups[0].pk}/score/", {"percent": "85", "note": "solid"})
    assert float(GroupImpact.objects.get(group=groups[0]).percent) == 85.0
    r = student.post(f"{url}items/{item.pk}/remove/", follow=True)
    assert "Removed." in r.content.decode()
    assert not ImpactItem.objects.filter(pk=item.pk).exists()
