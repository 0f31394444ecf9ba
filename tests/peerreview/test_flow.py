"""Peer review as staff and groups use it: the demo's 8 groups paired, reviews written and
submitted with version checks, released only after the due date, exclusions re-paired."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.calendar.models import Milestone
from apps.core.errors import Conflict
from apps.core.models import Membership, Role
from apps.groups.models import Group, GroupMembership
from apps.milestones.models import GroupMilestone
from apps.peerreview import services
from apps.peerreview.models import PeerAssignment, PeerRound

pytestmark = pytest.mark.django_db
GOOD = {
    "ai_used": False,
    "clarity": 4,
    "depth": 3,
    "correctness": 5,
    "rigour": 2,
    "artifact": 4,
    "strengths": "A clear hypothesis and a careful roofline analysis of the attention kernel.",
    "weaknesses": "The scaling experiment stops at two nodes, so the network claims are untested.",
    "suggestions": "Run the 4-node case in a sharing window and report the AllReduce share of the "
    "step.",
    "recommendation": "good",
}


def _api(user) -> APIClient:  # type: ignore[no-untyped-def]
    c = APIClient()
    c.force_authenticate(user)
    return c


def _record_drafts(course, milestone, *, skip: int = 0):  # type: ignore[no-untyped-def]
    """Every group but the last `skip` (by name) records its draft link."""
    groups = list(Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name"))
    for g in groups[: len(groups) - skip]:
        GroupMilestone.objects.get_or_create(
            milestone=milestone,
            group=g,
            defaults={
                "course": course,
                "link": f"https://docs.example.edu/{g.pk}/draft",
                "submitted_at": timezone.now(),
                "submitted_by": _member(g),
            },
        )


def _setup(course, *, publish: bool = True, due_in_days: int = 3, drafts: bool = True):  # type: ignore[no-untyped-def]
    staff = Membership.objects.filter(course=course, role=Role.INSTRUCTOR).first().user
    draft = Milestone.objects.get(course=course, name__icontains="draft")
    if drafts:
        _record_drafts(course, draft)
    r = _api(staff).post(
        f"/api/v1/courses/{course.code}/peer-review/rounds/",
        {
            "milestone": draft.pk,
            "due_at": (timezone.now() + dt.timedelta(days=due_in_days)).isoformat(),
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    round_id = r.json()["id"]
    if publish:
        p = _api(staff).post(
            f"/api/v1/courses/{course.code}/peer-review/rounds/{round_id}/pairing/",
            {"seed": 5, "publish": True},
            format="json",
        )
        assert p.json()["published"] is True
    return staff, PeerRound.objects.get(pk=round_id)


def _member(group: Group):  # type: ignore[no-untyped-def]
    return group.memberships.filter(left_at__isnull=True).order_by("pk").first().user


def test_the_demo_groups_are_paired_one_to_one_without_self_or_2_cycles(
    ee290_demo, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    with django_capture_on_commit_callbacks(execute=True):
        staff, r = _setup(course)
    pairs = list(PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id"))
    groups = set(
        Group.objects.filter(course=course, dissolved_at__isnull=True).values_list("pk", flat=True)
    )
    assert len(groups) == 8
    assert len(pairs) == 8
    assert {a for a, _ in pairs} == groups
    assert {b for _, b in pairs} == groups
    assert all(a != b for a, b in pairs)
    assert not [p for p in pairs if (p[1], p[0]) in pairs]
    preview = (
        _api(staff).get(f"/api/v1/courses/{course.code}/peer-review/rounds/{r.pk}/pairing/").json()
    )
    assert sorted((x["reviewer"], x["reviewee"]) for x in preview["pairs"]) == sorted(pairs)
    assert len(mail.outbox) == 40  # every member of every reviewing group
    # A second round with the same seed meets new reviewers (round 1's pairs are avoided), and
    # the same seed with the same history gives the same pairing again.
    _, r2 = _setup(course, publish=False, drafts=False)
    once = services.preview(actor=staff, course=course, round_id=r2.pk, seed=5).pairs
    twice = services.preview(actor=staff, course=course, round_id=r2.pk, seed=5).pairs
    assert once == twice
    assert not {frozenset(p) for p in once} & {frozenset(p) for p in pairs}


def test_reviews_are_saved_version_checked_submitted_and_released_only_after_the_due_date(
    ee290_demo,
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, r = _setup(course)
    a = PeerAssignment.objects.filter(round=r).select_related("reviewer", "reviewee").first()
    writer, colleague = list(a.reviewer.memberships.filter(left_at__isnull=True).order_by("pk"))[:2]
    url = f"/api/v1/courses/{course.code}/peer-review/reviews/{a.pk}/"
    first = _api(writer.user).put(url, {"version": 0, "clarity": 4}, format="json")
    assert first.status_code == 200
    assert first.json()["version"] == 1
    stale = _api(colleague.user).put(url, {"version": 0, "clarity": 2}, format="json")
    assert stale.status_code == 409
    assert "reload" in stale.json()["detail"]
    short = _api(colleague.user).put(
        url, {"version": 1, **GOOD, "strengths": "ok", "submit": True}, format="json"
    )
    assert short.status_code == 400
    done = _api(colleague.user).put(url, {"version": 1, **GOOD, "submit": True}, format="json")
    assert done.json()["status"] == "submitted"
    reviewed = _member(a.reviewee)
    reviews_url = f"/api/v1/courses/{course.code}/peer-review/reviews/"
    assert _api(reviewed).get(reviews_url).json()["count"] == 0  # before the due date: nothing
    page = Client()
    page.force_login(reviewed)
    assert GOOD["strengths"] not in page.get(f"/c/{course.code}/peer-review/").content.decode()
    outsider = next(
        g for g in Group.objects.filter(course=course) if g.pk not in (a.reviewer_id, a.reviewee_id)
    )
    PeerRound.objects.filter(pk=r.pk).update(due_at=timezone.now() - dt.timedelta(minutes=1))
    received = _api(reviewed).get(reviews_url).json()
    assert received["count"] == 1
    assert received["results"][0]["strengths"] == GOOD["strengths"]
    assert received["results"][0]["reviewer"] is None  # the round hides reviewers
    assert GOOD["strengths"] in page.get(f"/c/{course.code}/peer-review/").content.decode()
    others = _api(_member(outsider)).get(reviews_url).json()["results"]
    assert all(x["assignment"] != a.pk for x in others)  # no other pair's review
    late = _api(writer.user).put(url, {"version": 2, "clarity": 1}, format="json")
    assert late.status_code == 409  # after the due date nothing changes
    staff_view = _api(staff).get(reviews_url).json()
    assert staff_view["count"] == 1
    csv = b"".join(_staff_csv(course, staff, r)).decode()
    assert GOOD["weaknesses"] in csv


def _staff_csv(course, staff, r):  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(staff)
    return c.get(f"/c/{course.code}/peer-review/?round={r.pk}&format=csv").streaming_content


def test_another_group_cannot_write_or_read_a_review_by_id(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    _, r = _setup(course)
    a = PeerAssignment.objects.filter(round=r).first()
    stranger = next(g for g in Group.objects.filter(course=course) if g.pk != a.reviewer_id)
    r_ = _api(_member(stranger)).put(
        f"/api/v1/courses/{course.code}/peer-review/reviews/{a.pk}/", {"version": 0}, format="json"
    )
    assert r_.status_code == 404
    assigned = (
        _api(_member(stranger))
        .get(f"/api/v1/courses/{course.code}/peer-review/rounds/{r.pk}/assignments/")
        .json()
    )
    assert [x["reviewer"] for x in assigned["results"]] == [stranger.pk]


def test_leaving_a_group_out_after_publishing_re_pairs_the_rest_with_few_changes(
    ee290_demo,
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, r = _setup(course)
    before = set(PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id"))
    gone = next(iter(before))[0]
    changed = services.exclude(
        actor=staff, course=course, round_id=r.pk, group_id=gone, reason="no draft"
    )
    after = set(PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id"))
    assert len(after) == 7
    assert all(gone not in p for p in after)
    assert changed == 2
    assert len(before & after) == 6


def test_staff_preview_reroll_swap_and_publish_on_the_page(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, r = _setup(course, publish=False)
    c = Client()
    c.force_login(staff)
    page = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/preview/",
        {"seed": "1"},
        follow=True,
    ).content.decode()
    assert "Pairing for seed 1" in page
    assert "Who reviews whom" in page
    first = PeerRound.objects.get(pk=r.pk).proposal
    c.post(f"/c/{course.code}/peer-review/rounds/{r.pk}/reroll/")
    assert PeerRound.objects.get(pk=r.pk).seed == 2
    a, b = (
        PeerRound.objects.get(pk=r.pk).proposal[0][0],
        PeerRound.objects.get(pk=r.pk).proposal[1][0],
    )
    msg = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/swap/",
        {"a": a, "b": b},
        follow=True,
    ).content.decode()
    assert "Swapped" in msg or "Not swapped" in msg
    refused = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/publish/", follow=True
    ).content.decode()
    assert "Tick the box" in refused
    ok = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/publish/",
        {"confirm": "yes"},
        follow=True,
    ).content.decode()
    assert "Published 8 review assignments" in ok
    assert first  # a proposal existed before the re-roll
    with pytest.raises(Conflict):
        services.preview(actor=staff, course=course, round_id=r.pk, seed=9)


def test_the_review_due_date_is_on_the_reviewing_groups_calendar(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    _, r = _setup(course)
    a = PeerAssignment.objects.filter(round=r).select_related("reviewee").first()
    events = _api(_member(a.reviewer)).get(f"/api/v1/courses/{course.code}/calendar/").json()
    mine = [
        e
        for e in (events["results"] if isinstance(events, dict) else events)
        if e.get("kind") == "duty"
    ]
    assert any(
        f"Your group reviews {a.reviewee.name}" in (e.get("description") or "") for e in mine
    )


def test_a_dissolved_group_leaves_open_rounds_and_the_rest_are_re_paired(
    ee290_demo, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    """Lifecycle: dissolving a group takes it out of a published round that is still open (the
    rest re-paired, most pairs kept) and out of an unpublished round's proposal."""
    from apps.core.invariants import run_checks
    from apps.groups.services import group_dissolve

    course = ee290_demo
    staff, published = _setup(course)
    _, draft = _setup(course, publish=False)
    services.preview(actor=staff, course=course, round_id=draft.pk, seed=3)
    before = set(
        PeerAssignment.objects.filter(round=published).values_list("reviewer_id", "reviewee_id")
    )
    gone = next(iter(before))[0]
    assert any(gone in pair for pair in PeerRound.objects.get(pk=draft.pk).proposal)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        group_dissolve(actor=staff, course=course, group_id=gone)
    after = set(
        PeerAssignment.objects.filter(round=published).values_list("reviewer_id", "reviewee_id")
    )
    assert len(after) == 7
    assert all(gone not in p for p in after)
    assert len(before & after) == 6
    assert all(gone not in pair for pair in PeerRound.objects.get(pk=draft.pk).proposal)
    assert run_checks(course.pk) == []
    # The groups whose published pairs changed are told whom they review now; nobody else is.
    changed = {g for pair in before ^ after for g in pair} - {gone}
    told = {
        m.user.email
        for m in GroupMembership.objects.filter(
            group_id__in=changed, left_at__isnull=True
        ).select_related("user")
    }
    repaired = [m for m in mail.outbox if "changed: a group left" in m.subject]
    assert told
    assert {m.to[0] for m in repaired} == told


def test_publishing_to_groups_without_a_draft_asks_first_and_names_them(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """A round published before some groups recorded their draft would send reviewers to
    nothing: staff are told who, and publish only once they confirm (page and API)."""
    course = ee290_demo
    staff, r = _setup(course, publish=False, drafts=False)
    _record_drafts(course, r.milestone, skip=2)
    waiting = list(
        Group.objects.filter(course=course).order_by("name").values_list("name", flat=True)
    )[-2:]
    services.preview(actor=staff, course=course, round_id=r.pk, seed=3)
    c = Client()
    c.force_login(staff)
    page = c.get(f"/c/{course.code}/peer-review/?round={r.pk}").content.decode()
    assert f"Publish although {waiting[0]}, {waiting[1]} have no draft recorded yet" in page
    refused = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/publish/",
        {"confirm": "yes"},
        follow=True,
    ).content.decode()
    assert f"2 reviewed group(s) have no draft of Draft report recorded: {waiting[0]}" in refused
    assert not PeerAssignment.objects.filter(round=r).exists()
    api = _api(staff).post(
        f"/api/v1/courses/{course.code}/peer-review/rounds/{r.pk}/pairing/",
        {"seed": 3, "publish": True},
        format="json",
    )
    assert api.status_code == 409
    assert api.json()["code"] == "drafts_missing"
    ok = c.post(
        f"/c/{course.code}/peer-review/rounds/{r.pk}/publish/",
        {"confirm": "yes", "without_drafts": "yes"},
        follow=True,
    ).content.decode()
    assert "Published 8 review assignments" in ok


def test_a_second_round_pairs_no_groups_that_met_in_the_first(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Round 2 gives every group new reviewers when it can (either way round), as Canvas
    does; the same seed without round 1 would have repeated some of its pairs."""
    course = ee290_demo
    staff, first = _setup(course)
    met = {
        frozenset(p)
        for p in PeerAssignment.objects.filter(round=first).values_list(
            "reviewer_id", "reviewee_id"
        )
    }
    _, second = _setup(course, publish=False, drafts=False)
    result = services.preview(actor=staff, course=course, round_id=second.pk, seed=5)
    assert result.ok
    assert result.soft_violations == 0
    assert not {frozenset(p) for p in result.pairs} & met
    # The same seed, round 1 unpublished, pairs as round 1 did: the rule is what differs.
    PeerRound.objects.filter(pk=first.pk).update(published_at=None)
    again = services.preview(actor=staff, course=course, round_id=second.pk, seed=5)
    assert {frozenset(p) for p in again.pairs} & met


def test_a_student_moved_after_the_round_keeps_the_peer_score_of_the_group_reviewed(
    ee290_demo,
) -> None:  # type: ignore[no-untyped-def]
    import time_machine

    from apps.gradebook import sources
    from apps.groups.services import member_move

    course = ee290_demo
    staff, r = _setup(course)
    a = PeerAssignment.objects.filter(round=r).select_related("reviewer", "reviewee").first()
    url = f"/api/v1/courses/{course.code}/peer-review/reviews/{a.pk}/"
    done = _api(_member(a.reviewer)).put(url, {"version": 0, **GOOD, "submit": True}, format="json")
    assert done.json()["status"] == "submitted"
    mover = _member(a.reviewee)
    elsewhere = next(
        g
        for g in Group.objects.filter(course=course, dissolved_at__isnull=True)
        if g.pk not in (a.reviewee_id, a.reviewer_id)
    )
    with time_machine.travel(r.due_at + dt.timedelta(days=1), tick=False):
        before = sources.peer_review(course, [mover.pk], {mover.pk: a.reviewee_id})[mover.pk]
        member_move(actor=staff, course=course, user_id=mover.pk, group_id=elsewhere.pk)
        after = sources.peer_review(course, [mover.pk], {mover.pk: elsewhere.pk})
    assert before.percent is not None
    assert after[mover.pk].percent == before.percent  # the review was of the group they were in
