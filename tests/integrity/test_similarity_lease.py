"""A similarity check waiting its turn on the one queue is not failed; a running one whose
worker stopped is taken over by a real worker, or failed with the reason (#70: the sweeper
failed any check not updated for 10 minutes, so a check queued behind a grading pass failed)."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.utils import timezone

from apps.core.jobs import jobs, sweep_all
from apps.core.models import Course, Role, User
from apps.integrity import services
from apps.integrity.models import SimilarityCheck
from tests.factories import CourseFactory, GroupFactory, member
from tests.integrity import planted
from tests.integrity.test_similarity import zip_of

pytestmark = pytest.mark.django_db(transaction=True)


def _queued_check(title: str) -> tuple[Course, User, SimilarityCheck]:
    course = CourseFactory()
    for name in ("Alpha", "Bravo", "Charlie"):
        GroupFactory(course=course, name=name)
    ta = member(course, Role.TA)
    made = services.similarity_upload(
        actor=ta,
        course=course,
        title=title,
        data=zip_of(
            {
                "Alpha/train.py": planted.ORIGINAL,
                "Bravo/train.py": planted.RENAMED_COPY,
                "Charlie/train.py": planted.INDEPENDENT_TORCH,
            }
        ),
    )
    return course, ta, made.check


def _wait_for(check: SimilarityCheck, status: str, seconds: float = 90) -> SimilarityCheck:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        check.refresh_from_db()
        if check.status == status:
            return check
        time.sleep(0.3)
    raise AssertionError(f"still {check.status} ({check.note}) after {seconds} s")


def test_a_check_waiting_in_the_queue_is_not_failed_and_a_worker_still_does_it(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    course, _ta, check = _queued_check("A2 waiting")
    long_ago = timezone.now() - dt.timedelta(minutes=45)  # a grading pass holds the worker
    SimilarityCheck.objects.filter(pk=check.pk).update(created_at=long_ago, updated_at=long_ago)
    said = sweep_all(timezone.now())
    check.refresh_from_db()
    assert (check.status, check.note) == ("queued", "")
    assert f"integrity: similarity check {check.pk} sent again after waiting 0:30:00" in said
    assert [j.status for j in jobs(course.pk) if j.kind == "similarity check"] == ["queued"]
    assert not [line for line in sweep_all(timezone.now()) if "similarity" in line]  # once
    celery_worker_process()
    done = _wait_for(check, "done")
    assert done.stats["pairs"] >= 1
    assert done.lease_until is None


def test_a_running_check_whose_worker_died_is_taken_over_then_failed_with_the_reason(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    _course, _ta, check = _queued_check("A2 taken over")
    gone = timezone.now() - dt.timedelta(minutes=1)  # claimed, then its worker was killed
    SimilarityCheck.objects.filter(pk=check.pk).update(status="running", lease_until=gone)
    assert f"integrity: similarity check {check.pk} queued again: its worker stopped" in (
        sweep_all(timezone.now())
    )
    check.refresh_from_db()
    assert (check.status, check.takeovers) == ("queued", 1)
    celery_worker_process()
    done = _wait_for(check, "done")
    assert done.stats["pairs"] >= 1

    _course, _ta, again = _queued_check("A2 killed thrice")
    _wait_for(again, "done")  # the live worker does it; then make it look killed twice over
    SimilarityCheck.objects.filter(pk=again.pk).update(
        status="running", lease_until=gone, takeovers=2
    )
    assert f"integrity: similarity check {again.pk} failed: its worker stopped" in (
        sweep_all(timezone.now())
    )
    again.refresh_from_db()
    assert again.status == "failed"
    assert "A worker stopped while comparing this check 3 times" in again.note


def test_a_worker_taken_over_from_stores_nothing() -> None:
    _course, _ta, check = _queued_check("A2 raced")
    real_compare = services.compare.compare

    def taken_over_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real_compare(*args, **kwargs)
        SimilarityCheck.objects.filter(pk=check.pk).update(lease_until=None, takeovers=1)
        return found

    services.compare.compare = taken_over_meanwhile  # type: ignore[assignment]
    try:
        assert services.similarity_run(check.pk) == "ended elsewhere"
    finally:
        services.compare.compare = real_compare  # type: ignore[assignment]
    assert check.pairs.count() == 0
