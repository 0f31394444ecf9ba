"""Grading runs and their passes: a re-grade that says "done" only when it is.

`run_create` freezes the key (its hash is the run's `key_version`; a changed key makes a new
run) and starts a *pass*: the course's students cut into chunks, one `PassChunk` row each. A
chunk task grades its students and, in one transaction, upserts their grades under this pass,
marks the chunk done and adds one to the pass's `chunks_done`; a redelivered chunk finds itself
done and changes nothing. The pass is done when `chunks_done == chunks_total`; in that same
transaction the run's `current_pass` moves to it (the one switch readers see) and the previous
pass's grades are dropped. Readers always read `current_pass`, so a re-grade in progress shows
the last complete grades, never a mix.

At most one pass of a run is in progress (a partial unique index): a second re-grade started
while one runs returns the running pass. A chunk that keeps failing marks its pass failed with
the students it could not grade; results stay on the last complete pass.
"""

from __future__ import annotations

import datetime as dt
import json
import math

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.autograder import rules, written
from apps.autograder.models import Grade, GradingPass, GradingRun, PassChunk, Question, QuestionSet
from apps.autograder.services import (
    _has_draws,
    chunks,
    fixed_keys,
    grade_students,
    key_version,
    students_of,
)
from apps.core import bulk
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import User
from apps.core.permissions import is_staff
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record

STALE_QUEUE = dt.timedelta(minutes=1)


def _check_keys(question_set: QuestionSet) -> None:
    for q in question_set.questions.all():
        if q.kind in (Question.Kind.CHOICE, Question.Kind.WRITTEN):
            continue
        if not _has_draws(q):
            try:
                fixed_keys(q)
            except rules.KeyError_ as exc:
                raise DomainError(f"{q.key}: the key cannot be computed: {exc}") from None


def _mark_queue_failure(pass_id: int) -> None:
    with transaction.atomic():
        GradingPass.objects.filter(pk=pass_id, status__in=GradingPass.IN_PROGRESS).update(
            status=GradingPass.Status.FAILED,
            finished_at=timezone.now(),
            note="The task queue did not answer; nothing was graded. Grade again.",
        )
        run_ids = GradingPass.objects.filter(pk=pass_id).values_list("run_id", flat=True)
        GradingRun.objects.filter(pk__in=run_ids).update(status=GradingRun.Status.FAILED)


def chunk_size_for(students: int) -> int:
    """Students per chunk: the fewest chunks of at most `AUTOGRADER_CHUNK_MAX` students that
    keep every grading worker busy to the end (a multiple of `GRADING_WORKERS` chunks)."""
    workers = max(1, settings.GRADING_WORKERS)
    rounds = max(1, math.ceil(students / (workers * settings.AUTOGRADER_CHUNK_MAX)))
    return max(1, math.ceil(students / (workers * rounds)))


def run_create(
    *, actor: User, question_set: QuestionSet, chunk_size: int | None = None
) -> GradingRun:
    """Grade the set against its current key: a new run if the key changed, else a new pass of
    the run that has this key, cut into chunks of `chunk_size` students (default: sized to the
    workers, `chunk_size_for`). Returns the run; its newest pass is the one just started (or the
    one already running, when a re-grade is asked for twice).

    Locks the run row; the partial unique index on in-progress passes backs it. Queues the pass
    after commit; if the queue does not answer, the pass is marked failed and `Unavailable`
    (503) is raised."""
    if not is_staff(actor, question_set.course):
        raise NotAllowed("Only the course staff run grading.")
    _check_keys(question_set)
    version = key_version(question_set)
    students = students_of(question_set.course)
    chunk_size = chunk_size or chunk_size_for(len(students))
    n_questions = question_set.questions.count()
    with transaction.atomic():
        run, _ = GradingRun.objects.get_or_create(
            question_set=question_set,
            key_version=version,
            defaults={"created_by": actor, "chunk_size": chunk_size},
        )
        run = GradingRun.objects.select_for_update().get(pk=run.pk)
        running = run.passes.filter(status__in=GradingPass.IN_PROGRESS).first()
        now = timezone.now()
        if running is not None and not is_stuck(running, now):
            return run
        if running is not None:  # "grade again" on a pass no worker is moving: start afresh
            _end_stuck(running, f"superseded: no worker had moved it for {_silence(running, now)}")
        number = (run.passes.order_by("-number").values_list("number", flat=True).first() or 0) + 1
        parts = list(chunks(students, chunk_size))
        try:
            with transaction.atomic():
                grading_pass = GradingPass.objects.create(
                    run=run,
                    number=number,
                    chunks_total=len(parts),
                    expected=len(students) * n_questions,
                    created_by=actor,
                )
        except IntegrityError:  # another re-grade got there first: it is the one
            return run
        PassChunk.objects.bulk_create(
            [
                PassChunk(grading_pass=grading_pass, index=i, student_ids=p)
                for i, p in enumerate(parts)
            ]
        )
        run.expected = grading_pass.expected
        run.chunk_size = chunk_size
        run.status = GradingRun.Status.QUEUED
        run.finished_at = None
        run.save(update_fields=["expected", "chunk_size", "status", "finished_at"])
        audit_record(
            actor=actor,
            action="grading.pass_queued",
            course=question_set.course,
            obj=run,
            after={"pass": number, "expected": grading_pass.expected, "key_version": version[:12]},
        )
        if not parts:  # no students: nothing to grade, the pass is complete at once
            _finish(grading_pass)
        else:
            pass_id = grading_pass.pk
            enqueue_on_commit(
                lambda: task_named("autograder.grade_pass").delay(pass_id),
                what="the grading run",
                critical=True,
                on_failure=lambda _exc: _mark_queue_failure(pass_id),
            )
    return run


def pass_start(pass_id: int) -> list[int]:
    """Mark the pass running; the indexes of its chunks still to grade (all, the first time;
    the unfinished ones if the start task is delivered again)."""
    with transaction.atomic():
        now = timezone.now()
        updated = GradingPass.objects.filter(pk=pass_id, status=GradingPass.Status.QUEUED).update(
            status=GradingPass.Status.RUNNING, started_at=now, heartbeat_at=now
        )
        GradingPass.objects.filter(pk=pass_id).update(heartbeat_at=now)
        if updated:
            run_id = GradingPass.objects.values_list("run_id", flat=True).get(pk=pass_id)
            GradingRun.objects.filter(pk=run_id).update(status=GradingRun.Status.RUNNING)
    return list(
        PassChunk.objects.filter(grading_pass_id=pass_id, status=PassChunk.Status.QUEUED)
        .order_by("index")
        .values_list("index", flat=True)
    )


def _finish(grading_pass: GradingPass) -> None:
    """Inside the caller's transaction: the pass is complete; readers switch to it at commit.

    The pass readers saw until now keeps its grades (a reader that loaded the run a moment
    before the switch still finds them); passes older than that are dropped."""
    now = timezone.now()
    previous = (
        GradingRun.objects.filter(pk=grading_pass.run_id)
        .values_list("current_pass_id", flat=True)
        .first()
    )
    GradingPass.objects.filter(pk=grading_pass.pk).update(
        status=GradingPass.Status.DONE, finished_at=now
    )
    GradingRun.objects.filter(pk=grading_pass.run_id).update(
        current_pass=grading_pass, status=GradingRun.Status.DONE, finished_at=now
    )
    keep = [grading_pass.pk] + ([previous] if previous else [])
    older = GradingPass.objects.filter(run_id=grading_pass.run_id).exclude(pk__in=keep)
    Grade.objects.filter(grading_pass__in=older.values("pk")).delete()


def chunk_claim(pass_id: int, index: int) -> None:
    """A worker starts the chunk: it holds it for the lease (its time limit and a margin); if it
    dies, the sweeper queues the chunk again once the lease has run out."""
    now = timezone.now()
    lease = dt.timedelta(seconds=settings.AUTOGRADER_CHUNK_LEASE_S)
    PassChunk.objects.filter(
        grading_pass_id=pass_id, index=index, status=PassChunk.Status.QUEUED
    ).update(lease_until=now + lease)
    GradingPass.objects.filter(pk=pass_id).update(heartbeat_at=now)


def grade_pass_chunk(pass_id: int, index: int) -> int:
    """Grade one chunk of a pass; returns the grades written (0 when it was already done, or its
    pass is no longer running). One transaction: grades, the chunk's done mark and the pass's
    count commit together or not at all."""
    chunk_claim(pass_id, index)
    with transaction.atomic():
        # Only the chunk's own row is locked while it grades (`of=self`): locking the joined
        # pass row too would make every other worker's chunk wait for this one.
        chunk = (
            PassChunk.objects.select_for_update(of=("self",))
            .select_related("grading_pass__run__question_set")
            .filter(grading_pass_id=pass_id, index=index)
            .first()
        )
        if chunk is None or chunk.status != PassChunk.Status.QUEUED:
            return 0
        grading_pass = chunk.grading_pass
        if not grading_pass.in_progress:
            return 0
        run = grading_pass.run
        written.lock_written(run.question_set)  # marks cannot change under this chunk
        rows = grade_students(run.question_set, list(chunk.student_ids))
        pass_pk = grading_pass.pk  # `.pk` is a property: read once, not once per grade
        # A plain append: the chunk's row lock and done mark (same transaction) make a second
        # write of this chunk's grades impossible; the unique index still stands behind it.
        bulk.insert(
            Grade,
            ["grading_pass", "student", "question", "score", "max_points", "detail"],
            (
                (
                    pass_pk,
                    r["student_id"],
                    r["question_id"],
                    round(r["fraction"] * r["points"], 6),
                    r["points"],
                    json.dumps(r["detail"]),
                )
                for r in rows
            ),
        )
        # The grades' foreign keys are checked now, before the pass row is locked below, so
        # two chunks queue on the pass row only for its counter, not for each other's checks.
        connection.check_constraints(table_names=[Grade._meta.db_table])
        grading_pass = GradingPass.objects.select_for_update(no_key=True).get(pk=pass_id)
        if not grading_pass.in_progress:  # ended (failed, superseded) while this chunk graded
            transaction.set_rollback(True)
            return 0
        chunk.status = PassChunk.Status.DONE
        chunk.attempts = F("attempts") + 1
        chunk.finished_at = timezone.now()
        chunk.save(update_fields=["status", "attempts", "finished_at"])
        grading_pass.chunks_done += 1
        grading_pass.done += len(rows)
        grading_pass.heartbeat_at = timezone.now()
        grading_pass.save(update_fields=["chunks_done", "done", "heartbeat_at"])
        if grading_pass.chunks_done == grading_pass.chunks_total:
            _finish(grading_pass)
    return len(rows)


def chunk_failed(pass_id: int, index: int, error: str) -> None:
    """A chunk gave up after its retries: the pass fails, naming the students it could not
    grade. Results stay on the last complete pass."""
    with transaction.atomic():
        chunk = (
            PassChunk.objects.select_for_update()
            .filter(grading_pass_id=pass_id, index=index)
            .first()
        )
        if chunk is None or chunk.status != PassChunk.Status.QUEUED:
            return
        chunk.status = PassChunk.Status.FAILED
        chunk.save(update_fields=["status"])
        grading_pass = GradingPass.objects.select_for_update().get(pk=pass_id)
        grading_pass.failed_students = sorted({*grading_pass.failed_students, *chunk.student_ids})
        grading_pass.status = GradingPass.Status.FAILED
        grading_pass.finished_at = timezone.now()
        grading_pass.note = f"A chunk failed after its retries: {error[:200]}"
        grading_pass.save(update_fields=["failed_students", "status", "finished_at", "note"])
        GradingRun.objects.filter(pk=grading_pass.run_id).update(status=GradingRun.Status.FAILED)


def _last_sign(p: GradingPass) -> dt.datetime:
    return p.heartbeat_at or p.started_at or p.created_at


def _silence(p: GradingPass, now: dt.datetime) -> str:
    return f"{int((now - _last_sign(p)).total_seconds() // 60)} min"


def is_stuck(p: GradingPass, now: dt.datetime) -> bool:
    """In progress, and no worker has started or finished a chunk of it for two leases."""
    lease = dt.timedelta(seconds=settings.AUTOGRADER_CHUNK_LEASE_S)
    return p.in_progress and now - _last_sign(p) > 2 * lease


def _end_stuck(p: GradingPass, why: str) -> None:
    """Inside the caller's transaction: the pass ends as failed, saying why; results stay on
    the last complete pass."""
    GradingPass.objects.filter(pk=p.pk, status__in=GradingPass.IN_PROGRESS).update(
        status=GradingPass.Status.FAILED, finished_at=timezone.now(), note=why[:300]
    )
    GradingRun.objects.filter(pk=p.run_id).update(status=GradingRun.Status.FAILED)


def sweep(now: dt.datetime) -> list[str]:
    """Take over what dead workers left (apps.core.jobs): a chunk whose lease ran out is queued
    again; a pass no worker has moved for two leases has its fan-out queued again; each ends
    as failed after `JOB_TAKEOVERS_MAX` takeovers. Queuing twice is harmless: a chunk is graded
    once (its row lock and done mark), a fan-out only queues unfinished chunks."""
    out: list[str] = []
    most = settings.JOB_TAKEOVERS_MAX
    expired = PassChunk.objects.filter(
        status=PassChunk.Status.QUEUED,
        lease_until__lt=now,
        grading_pass__status__in=GradingPass.IN_PROGRESS,
    ).values_list("pk", "grading_pass_id", "index", "takeovers")
    for pk, pass_id, index, takeovers in expired:
        if takeovers >= most:
            chunk_failed(pass_id, index, f"its worker stopped {takeovers + 1} times (killed?)")
            out.append(f"pass {pass_id} chunk {index} failed after {takeovers} takeovers")
            continue
        n = PassChunk.objects.filter(pk=pk, lease_until__lt=now).update(
            lease_until=None, takeovers=F("takeovers") + 1
        )
        if n:
            task_named("autograder.grade_pass_chunk").delay(pass_id, index)
            out.append(f"pass {pass_id} chunk {index} queued again")
    for p in GradingPass.objects.filter(status__in=GradingPass.IN_PROGRESS):
        if not is_stuck(p, now):
            continue
        if p.takeovers >= most:
            with transaction.atomic():
                _end_stuck(p, f"no worker moved it after {p.takeovers} takeovers; grade again")
            out.append(f"pass {p.pk} failed: stuck")
            continue
        GradingPass.objects.filter(pk=p.pk).update(takeovers=F("takeovers") + 1, heartbeat_at=now)
        task_named("autograder.grade_pass").delay(p.pk)
        out.append(f"pass {p.pk} queued again")
    return out


def latest_pass(run: GradingRun) -> GradingPass | None:
    return run.passes.order_by("-number").first()


def pass_in_progress(question_set: QuestionSet) -> GradingPass | None:
    """A pass of any of the set's runs that is still queued or running."""
    return (
        GradingPass.objects.filter(
            run__question_set=question_set, status__in=GradingPass.IN_PROGRESS
        )
        .select_related("run")
        .order_by("-created_at")
        .first()
    )


def progress(run: GradingRun) -> dict[str, object]:
    """What the progress bar and the API show: the newest pass's own counts, and the pass whose
    grades readers see. A pass queued for over a minute says that no worker has taken it."""
    newest = latest_pass(run)
    shown = run.current_pass
    note = newest.note if newest else ""
    if (
        newest
        and newest.status == GradingPass.Status.QUEUED
        and timezone.now() - newest.created_at > STALE_QUEUE
    ):
        note = (
            "No worker has taken this pass for over a minute. Start one: `make worker` (or "
            "`celery -A courseops worker`) beside the web server."
        )
    return {
        "run": run.pk,
        "status": newest.status if newest else run.status,
        "status_label": newest.get_status_display() if newest else run.get_status_display(),
        "pass": newest.number if newest else None,
        "done": newest.done if newest else 0,
        "expected": newest.expected if newest else run.expected,
        "chunks_done": newest.chunks_done if newest else 0,
        "chunks_total": newest.chunks_total if newest else 0,
        "failed_students": newest.failed_students if newest else [],
        "note": note,
        "showing_pass": shown.number if shown else None,
        "showing_finished_at": shown.finished_at.isoformat()
        if shown and shown.finished_at
        else None,
    }


def release_check(question_set: QuestionSet) -> None:
    """Results are released only from complete passes: refuse while one is running."""
    running = pass_in_progress(question_set)
    if running is not None:
        raise Conflict(
            f"Grading run #{running.run_id} pass {running.number} is still {running.status} "
            f"({running.chunks_done} of {running.chunks_total} chunks); release when it is done."
        )


def release(*, actor: User, question_set: QuestionSet, released: bool = True) -> QuestionSet:
    """Staff show (or hide) results and keys to students. Refused (409) while a grading pass
    of the set is running: students must see complete grades, never a pass half-way."""
    if not is_staff(actor, question_set.course):
        raise NotAllowed("Only the course staff release results.")
    if released:
        release_check(question_set)
    question_set.released_at = timezone.now() if released else None
    question_set.save(update_fields=["released_at"])
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="grading.released" if released else "grading.unreleased",
            course=question_set.course,
            obj=question_set,
        )
    return question_set
