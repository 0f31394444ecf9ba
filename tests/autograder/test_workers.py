"""Grading on real Celery workers (Redis broker, PostgreSQL), including a worker killed mid-run."""

from __future__ import annotations

import time

import pytest
from django.db.models import Count

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.models import Grade, GradingRun
from apps.autograder.passes import run_create
from apps.core.models import Role
from tests.autograder.test_grading import quiz_csv
from tests.factories import CourseFactory, member

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def setup(n_students: int):  # type: ignore[no-untyped-def]
    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    students = [member(course) for _ in range(n_students)]
    answers_import(actor=staff, question_set=qs, data=quiz_csv(students), commit=True)
    return qs, staff


def wait_for(predicate, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_a_run_is_graded_in_chunks_by_two_worker_processes(celery_worker_process) -> None:  # type: ignore[no-untyped-def]
    qs, staff = setup(120)
    celery_worker_process(concurrency=2)
    run = run_create(
        actor=staff, question_set=qs, chunk_size=10
    )  # on_commit queues it: this test commits
    assert wait_for(lambda: GradingRun.objects.get(pk=run.pk).status == "done", 90)
    assert Grade.objects.filter(grading_pass__run=run).count() == 120 * 10


def test_killing_a_worker_mid_run_loses_and_duplicates_nothing(celery_worker_process) -> None:  # type: ignore[no-untyped-def]
    qs, staff = setup(200)
    env = {"CELERY_VISIBILITY_TIMEOUT": "4", "AUTOGRADER_CHUNK_PAUSE_S": "0.15"}
    first = celery_worker_process(pool="solo", **env)
    run = run_create(actor=staff, question_set=qs, chunk_size=5)  # 40 chunks
    assert wait_for(lambda: Grade.objects.filter(grading_pass__run=run).count() >= 200, 60), (
        "the first worker never started grading"
    )
    first.kill()  # SIGKILL, mid-run: its current chunk is unacknowledged
    first.wait(10)
    partial = Grade.objects.filter(grading_pass__run=run).count()
    assert 0 < partial < 2000
    # Not done while chunks of this pass are unfinished, however many grades exist.
    assert GradingRun.objects.get(pk=run.pk).status != "done"
    assert GradingRun.objects.get(pk=run.pk).current_pass_id is None
    celery_worker_process(pool="solo", **env)
    assert wait_for(lambda: GradingRun.objects.get(pk=run.pk).status == "done", 120), (
        f"run stuck at {Grade.objects.filter(grading_pass__run=run).count()} of 2000 grades"
    )
    assert Grade.objects.filter(grading_pass__run=run).count() == 2000
    dupes = (
        Grade.objects.filter(grading_pass__run=run)
        .values("student", "question")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not dupes.exists()
    assert Grade.objects.filter(grading_pass__run=run).values("student").distinct().count() == 200


def test_an_uploaded_answers_file_is_previewed_then_stored_by_a_worker(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.models import Answer, AnswerUpload
    from apps.autograder.uploads import upload_commit, upload_create

    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    students = [member(course) for _ in range(300)]
    celery_worker_process()
    upload = upload_create(
        actor=staff, question_set=qs, filename="quiz.csv", data=quiz_csv(students)
    )
    assert wait_for(lambda: AnswerUpload.objects.get(pk=upload.pk).status == "previewed", 60)
    previewed = AnswerUpload.objects.get(pk=upload.pk)
    assert previewed.report["students"] == 300
    assert Answer.objects.filter(question__question_set=qs).count() == 0
    upload_commit(actor=staff, question_set=qs, upload_id=upload.pk)
    assert wait_for(lambda: AnswerUpload.objects.get(pk=upload.pk).status == "committed", 60)
    assert Answer.objects.filter(question__question_set=qs).count() == previewed.report["answers"]


def test_an_upload_with_old_mac_line_endings_is_previewed_by_a_worker(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    """Bare `\r` line endings crashed the worker's task and left the upload "reading the file"
    forever; the shared reader takes them like any other."""
    from apps.autograder.models import AnswerUpload
    from apps.autograder.uploads import upload_create

    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    students = [member(course) for _ in range(3)]
    celery_worker_process()
    good = upload_create(
        actor=staff,
        question_set=qs,
        filename="mac.csv",
        data=quiz_csv(students).replace(b"\r\n", b"\r").replace(b"\n", b"\r"),
    )
    assert wait_for(lambda: AnswerUpload.objects.get(pk=good.pk).status == "previewed", 60)
    assert AnswerUpload.objects.get(pk=good.pk).report["students"] == 3


def test_an_upload_whose_reading_crashes_ends_failed_with_a_reason(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Whatever goes wrong while reading, the upload ends failed with a reason, never stays
    "reading the file"."""
    from apps.autograder import uploads
    from apps.autograder.models import AnswerUpload

    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    upload = AnswerUpload.objects.create(
        question_set=qs, uploaded_by=staff, filename="x.csv", data=b"email,q1\n", rows=0
    )

    def boom(**_: object) -> None:
        raise RuntimeError("a planted bug")

    monkeypatch.setattr(uploads, "answers_import", boom)
    assert uploads.upload_run(upload.pk) == "failed"
    upload.refresh_from_db()
    assert upload.error == "The file could not be read (RuntimeError); nothing was stored."
    assert uploads.progress(upload)["final"] is True


def test_a_whole_worker_killed_mid_pass_is_taken_over_by_the_next_within_two_minutes(
    celery_worker_process,
) -> None:  # type: ignore[no-untyped-def]
    """kill -9 of the whole worker (not a pool child) while it grades, with the broker's
    visibility timeout at its real two hours: the next worker's beat sweep finds the chunk whose
    lease ran out and queues it again, and the pass completes with every grade exactly once.
    (Chunk time limit 10 s here, so the lease is 25 s; production's is 60 s + 15 s.)"""
    qs, staff = setup(200)
    env = {
        "AUTOGRADER_CHUNK_PAUSE_S": "0.3",
        "AUTOGRADER_CHUNK_TIME_LIMIT_S": "10",
        "JOB_SWEEP_EVERY_S": "5",
    }
    first = celery_worker_process(pool="solo", **env)
    run = run_create(actor=staff, question_set=qs, chunk_size=5)  # 40 chunks
    assert wait_for(lambda: Grade.objects.filter(grading_pass__run=run).count() >= 200, 60)
    first.kill()
    first.wait(10)
    killed_at = time.monotonic()
    assert GradingRun.objects.get(pk=run.pk).status != "done"
    celery_worker_process(pool="solo", beat=True, **env)
    assert wait_for(lambda: GradingRun.objects.get(pk=run.pk).status == "done", 120), (
        f"run stuck at {Grade.objects.filter(grading_pass__run=run).count()} of 2000 grades"
    )
    assert time.monotonic() - killed_at < 120
    assert Grade.objects.filter(grading_pass__run=run).count() == 2000
    dupes = (
        Grade.objects.filter(grading_pass__run=run)
        .values("student", "question")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not dupes.exists()
