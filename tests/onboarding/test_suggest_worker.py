"""Group suggestions beyond a few dozen people: computed by a real worker with progress on the
page, accepted from the page, stale once anyone's group changes, and ended with a reason when
the worker is gone."""

from __future__ import annotations

import datetime as dt
import random
import re
import time

import pytest
from django.db.models import Count
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.errors import Conflict
from apps.core.models import Role
from apps.groups import services as groups
from apps.groups.models import GroupMembership
from apps.onboarding import jobs, matching, services
from apps.onboarding.models import GroupSuggestion
from tests.factories import member


def _students(course, n: int) -> list:  # type: ignore[no-untyped-def]
    return [
        member(course, email=f"w{i:03d}@example.edu", full_name=f"Worker Student {i:03d}")
        for i in range(n)
    ]


@pytest.mark.postgres
@pytest.mark.redis
def test_sixty_people_are_suggested_on_a_worker_and_accepted_from_the_page(
    celery_worker_process, ee290
) -> None:  # type: ignore[no-untyped-def]
    course = ee290
    staff = member(course, Role.INSTRUCTOR)
    students = _students(course, 60)
    celery_worker_process()
    web = Client()
    web.force_login(staff)
    base = f"/c/{course.code}/questionnaire/suggestions/"

    answer = web.post(base + "make/", {"seed": "2"}, follow=True)
    page = answer.content.decode()
    assert "Suggesting groups for 60 people on a worker" in page
    s = GroupSuggestion.objects.get(course=course)
    assert s.stats["people"] == 60

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        # The page first, then the status: still in progress now means it was when the page was
        # drawn (the other order raced a worker finishing between the two reads).
        page = web.get(base).content.decode()
        s.refresh_from_db()
        if s.status not in GroupSuggestion.IN_PROGRESS:
            break
        assert 'data-watch="3"' in page  # the notice updates itself while the work runs
        assert "Suggesting groups for 60 people" in page
        time.sleep(0.3)
    assert s.status == "done", s.note
    assert s.progress == 100
    page = web.get(base).content.decode()
    assert "data-watch" not in page
    assert "Accept: create these groups" in page
    assert len(re.findall(r"<h3>Group \d+", page)) == len(s.groups)

    t = time.perf_counter()
    answer = web.post(base + f"{s.pk}/accept/", follow=True)
    page = answer.content.decode()
    assert "A worker is creating the groups now" in page
    assert time.perf_counter() - t < 5
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s.refresh_from_db()
        if s.accepted_at is not None or s.note:
            break
        assert f"Creating {len(s.groups)} groups for 60 people" in page
        assert 'data-watch="3"' in page  # the notice updates itself while the work runs
        time.sleep(0.3)
        page = web.get(base).content.decode()
    assert s.accepted_at is not None, s.note
    page = web.get(base).content.decode()
    assert "The last suggestion was accepted" in page
    assert "data-watch" not in page
    placed = GroupMembership.objects.filter(course=course, left_at__isnull=True)
    assert placed.count() == 60
    sizes = sorted(placed.values("group_id").annotate(n=Count("id")).values_list("n", flat=True))
    assert sizes
    assert min(sizes) >= course.group_min_size
    assert max(sizes) <= course.group_max_size
    assert {m.user_id for m in placed} == {u.pk for u in students}


@pytest.mark.django_db
def test_the_api_answers_202_for_a_worker_suggestion_then_its_groups(
    ee290, settings, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    settings.SUGGEST_INLINE_MAX = 10
    staff = member(ee290, Role.TA)
    _students(ee290, 24)
    api = APIClient()
    api.force_authenticate(staff)
    url = f"/api/v1/courses/{ee290.code}/questionnaire/suggestions/"
    with django_capture_on_commit_callbacks(execute=True):
        first = api.post(url, {"seed": 1}, format="json")
        again = api.post(url, {"seed": 2}, format="json")
    assert first.status_code == 202, first.content
    assert first.json()["status"] == "queued"
    assert first.json()["groups"] == []
    assert again.json()["id"] == first.json()["id"]  # one at a time: the same one answers
    got = api.get(url).json()  # the (eager) worker ran once the request committed
    assert got["status"] == "done"
    assert got["progress"] == 100
    assert sorted(u for g in got["groups"] for u in g) == sorted(
        GroupSuggestion.objects.get().groups and [u for g in got["groups"] for u in g]
    )
    assert sum(len(g) for g in got["groups"]) == 24


@pytest.mark.django_db
def test_a_suggestion_is_out_of_date_once_someones_group_changes(ee290) -> None:
    staff = member(ee290, Role.TA)
    students = _students(ee290, 12)
    s = services.suggestion_make(actor=staff, course=ee290, seed=0)
    assert s.status == "done"
    assert not services.suggestion_stale(ee290, s)
    web = Client()
    web.force_login(staff)
    base = f"/c/{ee290.code}/questionnaire/suggestions/"
    assert "Accept: create these groups" in web.get(base).content.decode()

    g = groups.group_staff_create(actor=staff, course=ee290, name="Early birds")
    groups.member_move(actor=staff, course=ee290, user_id=students[0].pk, group_id=g.pk)

    page = web.get(base).content.decode()
    assert "Out of date:" in page
    assert "Accept: create these groups" not in page
    with pytest.raises(Conflict, match="Someone's group changed since this suggestion"):
        services.suggestion_accept(actor=staff, course=ee290, suggestion_id=s.pk)
    assert GroupMembership.objects.filter(course=ee290, left_at__isnull=True).count() == 1


@pytest.mark.django_db
def test_a_suggestion_whose_worker_is_gone_ends_failed_with_the_reason(ee290) -> None:
    staff = member(ee290, Role.TA)
    s = GroupSuggestion.objects.create(
        course=ee290, status="running", progress=40, stats={"people": 900}, created_by=staff
    )
    later = timezone.now() + dt.timedelta(minutes=6)
    assert [j.status for j in jobs.listed(ee290.pk)] == ["running"]
    assert jobs.sweep(timezone.now()) == []
    assert jobs.sweep(later) == ["1 group suggestion(s) failed: worker gone"]
    s.refresh_from_db()
    assert s.status == "failed"
    assert "No worker moved this suggestion" in s.note
    web = Client()
    web.force_login(staff)
    page = web.get(f"/c/{ee290.code}/questionnaire/suggestions/").content.decode()
    assert "The last suggestion failed" in page
    assert "No worker moved" in page
    GroupSuggestion.objects.filter(pk=s.pk).update(status="running")
    with pytest.raises(Conflict, match="not ready"):
        services.suggestion_accept(actor=staff, course=ee290, suggestion_id=s.pk)


def test_a_pool_larger_than_a_block_keeps_every_rule_and_reports_each_block() -> None:
    rng = random.Random(7)
    people = list(range(1, 451))
    wishes = {a: frozenset(rng.sample(people, rng.choice([0, 1, 2]))) - {a} for a in people}
    for a in people[::9]:  # mutual pairs
        b = a + 1
        wishes[a] = wishes[a] | {b}
        wishes[b] = wishes[b] | {a}
    together = [frozenset({10, 11, 12}), frozenset({300, 301})]
    interests = {a: frozenset(rng.sample([f"t{i}" for i in range(20)], 2)) for a in people}
    p = matching.MatchingProblem(people, wishes, interests, together, 4, 6, seed=1)
    heard: list[tuple[int, int]] = []
    result = matching.suggest(p, progress=lambda done, total: heard.append((done, total)))
    assert result.ok, result.reason
    assert matching.check(p, result.groups) == []
    assert heard[-1][0] == heard[-1][1] > 1
    assert [d for d, _ in heard] == list(range(1, heard[-1][1] + 1))
    assert result.mutual_kept == result.mutual_possible


@pytest.mark.django_db
def test_a_large_acceptance_waits_for_a_worker_which_rechecks_and_makes_nothing_if_refused(
    ee290, settings, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    settings.SUGGEST_INLINE_MAX = 10
    staff = member(ee290, Role.TA)
    students = _students(ee290, 24)
    with django_capture_on_commit_callbacks(execute=True):
        s = services.suggestion_make(actor=staff, course=ee290, seed=0)
    s.refresh_from_db()
    assert s.status == "done"
    api = APIClient()
    api.force_authenticate(staff)
    url = f"/api/v1/courses/{ee290.code}/questionnaire/suggestions/{s.pk}/accept/"

    # While it waits for the worker, someone joins a group: the worker refuses, nothing is made.
    with django_capture_on_commit_callbacks(execute=False) as queued:
        answer = api.post(url)
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "accepting"
    assert answer.json()["accepted_at"] is None
    web = Client()
    web.force_login(staff)
    page = web.get(f"/c/{ee290.code}/questionnaire/suggestions/").content.decode()
    assert f"Creating {len(s.groups)} groups for 24 people" in page
    assert "Accept: create these groups" not in page
    assert api.post(url).status_code == 409  # a second click: being accepted already
    g = groups.group_staff_create(actor=staff, course=ee290, name="Early birds")
    groups.member_move(actor=staff, course=ee290, user_id=students[0].pk, group_id=g.pk)
    for callback in queued:
        callback()
    s.refresh_from_db()
    assert s.status == "done"
    assert s.accepted_at is None
    assert "no group was made: Someone's group changed" in s.note
    assert GroupMembership.objects.filter(course=ee290, left_at__isnull=True).count() == 1
    page = web.get(f"/c/{ee290.code}/questionnaire/suggestions/").content.decode()
    assert "no group was made: Someone&#x27;s group changed" in page

    # A fresh suggestion, accepted with nobody interfering: every group made by the worker.
    with django_capture_on_commit_callbacks(execute=True):
        fresh = services.suggestion_make(actor=staff, course=ee290, seed=1)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(url.replace(f"/{s.pk}/", f"/{fresh.pk}/"))
    assert answer.status_code == 202
    fresh.refresh_from_db()
    assert fresh.accepted_at is not None
    assert fresh.note == ""
    assert GroupMembership.objects.filter(course=ee290, left_at__isnull=True).count() == 24


@pytest.mark.django_db
def test_an_acceptance_whose_worker_is_gone_is_ready_to_accept_again(ee290) -> None:
    staff = member(ee290, Role.TA)
    s = GroupSuggestion.objects.create(
        course=ee290, status="accepting", groups=[[1, 2, 3, 4]], stats={"people": 900}
    )
    assert [j.status for j in jobs.listed(ee290.pk)] == ["accepting"]
    with pytest.raises(Conflict, match="being accepted by a worker"):
        services.suggestion_make(actor=staff, course=ee290)
    assert jobs.sweep(timezone.now()) == []
    later = timezone.now() + dt.timedelta(minutes=6)
    assert jobs.sweep(later) == ["1 group acceptance(s) reset: worker gone"]
    s.refresh_from_db()
    assert s.status == "done"
    assert s.accepted_at is None
    assert "No worker accepted this suggestion" in s.note


@pytest.mark.django_db
def test_a_worker_error_ends_the_job_at_once_with_the_error_named(
    ee290, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from apps.onboarding import tasks

    settings.SUGGEST_INLINE_MAX = 10
    staff = member(ee290, Role.TA)
    _students(ee290, 24)
    s = GroupSuggestion.objects.create(
        course=ee290, status="queued", stats={"people": 24}, created_by=staff
    )

    def broken(*_args: object, **_kw: object) -> None:
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(matching, "suggest", broken)
    with pytest.raises(RuntimeError):
        tasks.suggest(s.pk)
    s.refresh_from_db()
    assert s.status == "failed"
    assert "RuntimeError: solver exploded" in s.note
    monkeypatch.undo()

    settings.SUGGEST_INLINE_MAX = 40  # computed here; accepted by the "worker" below
    done = services.suggestion_make(actor=staff, course=ee290, seed=0)
    settings.SUGGEST_INLINE_MAX = 10
    assert services.suggestion_accept(actor=staff, course=ee290, suggestion_id=done.pk) is None
    monkeypatch.setattr(groups, "member_move", broken)
    with pytest.raises(RuntimeError):
        tasks.accept(done.pk, staff.pk)
    done.refresh_from_db()
    assert done.status == "done"
    assert done.accepted_at is None
    assert "no group was made: the worker stopped with an error (RuntimeError" in done.note
    assert GroupMembership.objects.filter(course=ee290, left_at__isnull=True).count() == 0
