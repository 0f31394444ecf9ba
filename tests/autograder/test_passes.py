"""A re-grade says "done" only when every chunk of *its* pass has finished; until then readers
see the last complete pass, and results cannot be released. On the real services: a slow worker
on Redis, threads on PostgreSQL, and a broker that does not answer."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.autograder.models import Grade, GradingPass, GradingRun
from apps.autograder.passes import chunk_failed, progress, run_create
from apps.autograder.selectors import totals, visible_grades
from apps.core.models import AuditEvent
from tests.autograder.test_workers import setup, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _api(user) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.redis
def test_a_regrade_is_not_done_and_not_releasable_until_its_own_chunks_finish(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    qs, staff = setup(60)
    course = qs.course
    fast = celery_worker_process(pool="solo")
    run = run_create(actor=staff, question_set=qs, chunk_size=6)  # 10 chunks
    assert wait_for(lambda: GradingRun.objects.get(pk=run.pk).status == "done", 60)
    assert GradingRun.objects.get(pk=run.pk).current_pass.number == 1
    before = sorted(
        (r["student"].pk, r["score"]) for r in totals(GradingRun.objects.get(pk=run.pk))
    )

    # The re-grade on a slow worker only. Through the API it is one chunk (the default chunk size
    # holds all 60 students), which waits 1.5 s: room for many reads and refused releases (a
    # loop turn takes about 60 ms; with 0.3 s it was 2-5 turns and the test failed now and then).
    fast.terminate()
    fast.wait(20)
    celery_worker_process(pool="solo", AUTOGRADER_CHUNK_PAUSE_S="1.5")
    api = _api(staff)
    started = api.post(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/runs/")
    assert started.status_code == 202
    assert started.json()["id"] == run.pk
    assert started.json()["pass"] == 2
    seen: list[tuple[str, int]] = []
    refused = 0
    while True:
        p = api.get(f"/api/v1/courses/{course.code}/grading-runs/{run.pk}/").json()
        seen.append((p["status"], p["chunks_done"]))
        if p["status"] == "done":
            break
        assert p["showing_pass"] == 1  # readers keep the complete pass
        # What a reader sees, read once: a complete pass, never a mix of two, never empty.
        seen_passes = list(
            visible_grades(GradingRun.objects.get(pk=run.pk)).values_list("grading_pass", flat=True)
        )
        assert len(seen_passes) == 60 * 10
        assert len(set(seen_passes)) == 1
        release = api.post(
            f"/api/v1/courses/{course.code}/question-sets/{qs.key}/release/",
            {"released": True},
            format="json",
        )
        if release.status_code == 200:  # only if the last chunk finished in between
            assert GradingPass.objects.get(run=run, number=2).status == "done"
            break
        assert release.status_code == 409, release.json()
        assert "still" in release.json()["detail"]
        refused += 1
        assert len(seen) < 600, "the re-grade never finished"
        threading.Event().wait(0.05)
    assert refused >= 3  # the pass was seen in progress, and release was refused each time
    assert any(status != "done" and done < 10 for status, done in seen)
    final = GradingRun.objects.get(pk=run.pk)
    assert final.current_pass.number == 2
    assert visible_grades(final).count() == 60 * 10
    # The previous pass is kept for readers in flight (two passes' rows, no more).
    assert Grade.objects.filter(grading_pass__run=final).count() == 2 * 60 * 10
    assert sorted((r["student"].pk, r["score"]) for r in totals(final)) == before
    released = api.post(
        f"/api/v1/courses/{course.code}/question-sets/{qs.key}/release/",
        {"released": True},
        format="json",
    )
    assert released.status_code == 200


def test_two_regrades_started_at_once_make_one_pass(celery_eager) -> None:  # type: ignore[no-untyped-def]
    """Eight staff clicks at once on an unchanged key: one new pass, never two running."""
    qs, staff = setup(10)
    from courseops.celery import app

    app.conf.task_always_eager = False  # queue only; nothing runs the passes here
    first = run_create(actor=staff, question_set=qs)
    GradingPass.objects.filter(run=first).update(status="done", chunks_done=1)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def click() -> None:
        try:
            barrier.wait()
            run_create(actor=staff, question_set=qs)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    passes = list(
        GradingPass.objects.filter(run=first).order_by("number").values_list("number", "status")
    )
    assert passes == [(1, "done"), (2, "queued")]


def test_a_chunk_that_keeps_failing_fails_its_pass_and_names_the_students() -> None:
    qs, staff = setup(12)
    from courseops.celery import app

    app.conf.task_always_eager = False
    run = run_create(actor=staff, question_set=qs, chunk_size=5)
    grading_pass = run.passes.get()
    chunk = grading_pass.chunks.get(index=1)
    chunk_failed(grading_pass.pk, 1, "ValueError: boom")
    grading_pass.refresh_from_db()
    assert grading_pass.status == "failed"
    assert grading_pass.failed_students == sorted(chunk.student_ids)
    shown = progress(GradingRun.objects.get(pk=run.pk))
    assert shown["status"] == "failed"
    assert "boom" in shown["note"]
    assert shown["showing_pass"] is None  # nothing complete to show, and nothing half shown


def test_a_broker_that_does_not_answer_is_a_503_and_leaves_nothing_queued(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The publish goes to a real Redis address where nothing listens (port 1), with Celery's
    own retry policy shortened: kombu's connection error must become a 503, not a 500, and the
    pass must not sit "queued" forever."""
    from apps.autograder import tasks
    from courseops.celery import app

    qs, staff = setup(5)
    dead = app.connection_for_write("redis://127.0.0.1:1/0")

    def publish_to_dead_broker(*args):  # type: ignore[no-untyped-def]
        return tasks.grade_pass.apply_async(
            args, connection=dead, retry=True, retry_policy={"max_retries": 1, "interval_start": 0}
        )

    monkeypatch.setattr(tasks.grade_pass, "delay", publish_to_dead_broker)
    response = _api(staff).post(f"/api/v1/courses/{qs.course.code}/question-sets/{qs.key}/runs/")
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "unavailable"
    assert "try again" in response.json()["detail"]
    grading_pass = GradingPass.objects.get(run__question_set=qs)
    assert grading_pass.status == "failed"  # not left "queued" forever
    assert "task queue did not answer" in grading_pass.note
    assert AuditEvent.objects.filter(action="grading.pass_queued").count() == 1
    # Once the queue is back, grading again starts a fresh pass.
    monkeypatch.undo()
    from courseops.celery import app as celery_app

    celery_app.conf.task_always_eager = False
    run = run_create(actor=staff, question_set=qs)
    assert run.passes.filter(number=2, status="queued").exists()
