"""Answers CSV uploads through a Celery task: store the file, preview it, commit it on request.

The web request only validates the envelope (staff, size, not empty) and stores the file; the
task runs `intake.answers_import` (preview = the import rolled back; commit = the same import
kept), reporting progress to the cache every 2,000 rows so the page's bar moves while it runs.
Both steps are safe to run twice: a preview writes nothing, and a commit upserts answers on
(question, student, part).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.autograder.intake import MAX_UPLOAD_BYTES, answers_import
from apps.autograder.models import AnswerUpload, QuestionSet
from apps.core.csvfile import looks_binary
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import User
from apps.core.permissions import is_staff
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record

log = logging.getLogger(__name__)
FINAL = {AnswerUpload.Status.PREVIEWED, AnswerUpload.Status.COMMITTED, AnswerUpload.Status.FAILED}


def _data_rows(data: bytes) -> int:
    """Lines after the header (a quoted cell with a line break counts twice: a progress bar)."""
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return max(lines - 1, 0)


def _progress_key(upload_id: int) -> str:
    return f"answer-upload-progress:{upload_id}"


def _queue(upload: AnswerUpload) -> None:

    def failed(exc: BaseException) -> None:
        AnswerUpload.objects.filter(pk=upload.pk).update(
            status=AnswerUpload.Status.FAILED,
            error="The task queue did not answer; upload again.",
            finished_at=timezone.now(),
        )

    enqueue_on_commit(
        lambda: task_named("autograder.answers_intake").delay(upload.pk),
        what="reading the answers file",
        critical=True,
        on_failure=failed,
    )


def upload_create(
    *, actor: User, question_set: QuestionSet, filename: str, data: bytes, commit: bool = False
) -> AnswerUpload:
    """Store the file and queue its preview (or, with `commit`, its import straight away)."""
    if not is_staff(actor, question_set.course):
        raise NotAllowed("Only the course staff upload answers.")
    if len(data) > MAX_UPLOAD_BYTES:
        raise DomainError(
            f"The file is {len(data) / 1e6:,.1f} MB; the most is {MAX_UPLOAD_BYTES / 1e6:,.0f} MB.",
            field="file",
        )
    if not data.strip():
        raise DomainError("The file is empty.", field="file")
    if looks_binary(data):  # the rest is read by the worker, which reports every problem
        raise DomainError("This is not a text file; export the sheet as CSV.", field="file")
    status = AnswerUpload.Status.COMMITTING if commit else AnswerUpload.Status.PREVIEWING
    with transaction.atomic():
        upload = AnswerUpload.objects.create(
            question_set=question_set,
            uploaded_by=actor,
            filename=filename[:200],
            data=data,
            rows=_data_rows(data),
            status=status,
        )
        audit_record(
            actor=actor,
            action="answers.uploaded",
            course=question_set.course,
            obj=upload,
            after={"filename": upload.filename, "bytes": len(data), "commit": commit},
        )
        _queue(upload)
    return upload


def upload_commit(*, actor: User, question_set: QuestionSet, upload_id: int) -> AnswerUpload:
    """Store the answers of a previewed upload. A second call while it runs, or after, changes
    nothing and returns the upload as it is."""
    if not is_staff(actor, question_set.course):
        raise NotAllowed("Only the course staff store answers.")
    with transaction.atomic():
        upload = (
            AnswerUpload.objects.select_for_update()
            .filter(question_set=question_set, pk=upload_id)
            .first()
        )
        if upload is None:
            raise NotFound("No such upload for this question set.")
        if upload.status in {AnswerUpload.Status.COMMITTING, AnswerUpload.Status.COMMITTED}:
            return upload
        if upload.status != AnswerUpload.Status.PREVIEWED:
            raise Conflict(
                f"The preview is not ready ({upload.get_status_display().lower()}); wait for it, "
                "then confirm."
            )
        upload.status, upload.finished_at = AnswerUpload.Status.COMMITTING, None
        upload.save(update_fields=["status", "finished_at"])
        audit_record(
            actor=actor, action="answers.committed", course=question_set.course, obj=upload
        )
        _queue(upload)
    return upload


def upload_run(upload_id: int) -> str:
    """The task's work: preview or commit, whichever the upload asks for now. Returns the
    status it leaves."""
    upload = (
        AnswerUpload.objects.select_related("question_set__course", "uploaded_by")
        .filter(pk=upload_id)
        .first()
    )
    if upload is None or upload.status in FINAL:
        return upload.status if upload else "missing"
    commit = upload.status == AnswerUpload.Status.COMMITTING
    key = _progress_key(upload.pk)
    fields: dict[str, Any]
    lease = dt.timedelta(seconds=settings.AUTOGRADER_UPLOAD_LEASE_S)
    AnswerUpload.objects.filter(pk=upload.pk).update(lease_until=timezone.now() + lease)
    cache.set(key, 0, 3600)
    try:
        report = answers_import(
            actor=upload.uploaded_by,
            question_set=upload.question_set,
            data=bytes(upload.data),
            commit=commit,
            progress=lambda n: cache.set(key, n, 3600),
        )
    except DomainError as exc:
        status, fields = AnswerUpload.Status.FAILED, {"error": exc.message}
    except Exception as exc:  # a bug must not leave the upload "reading" forever
        log.exception("answers upload %s failed", upload.pk)
        why = f"The file could not be read ({type(exc).__name__}); nothing was stored."
        status, fields = AnswerUpload.Status.FAILED, {"error": why}
    else:
        done = AnswerUpload.Status.COMMITTED if commit else AnswerUpload.Status.PREVIEWED
        status, fields = done, {"report": report.as_dict()}
    AnswerUpload.objects.filter(pk=upload.pk).update(
        status=status, finished_at=timezone.now(), lease_until=None, **fields
    )
    cache.delete(key)
    return status


def sweep(now: dt.datetime) -> list[str]:
    """Uploads whose worker died while reading or storing them (lease run out) are queued again
    (a preview is rolled back and a commit upserts, so running twice is harmless), and fail,
    saying so, after `JOB_TAKEOVERS_MAX` takeovers."""
    out = []
    stale = AnswerUpload.objects.exclude(status__in=FINAL).filter(lease_until__lt=now)
    for upload in stale.only("pk", "takeovers"):
        if upload.takeovers >= settings.JOB_TAKEOVERS_MAX:
            AnswerUpload.objects.filter(pk=upload.pk).update(
                status=AnswerUpload.Status.FAILED,
                finished_at=now,
                lease_until=None,
                error=f"A worker stopped while reading this file {upload.takeovers + 1} times; "
                "nothing was stored. Upload it again, or split it.",
            )
            out.append(f"upload {upload.pk} failed")
            continue
        AnswerUpload.objects.filter(pk=upload.pk).update(
            lease_until=None, takeovers=F("takeovers") + 1
        )
        task_named("autograder.answers_intake").delay(upload.pk)
        out.append(f"upload {upload.pk} queued again")
    return out


def upload_get(*, question_set: QuestionSet, upload_id: int) -> AnswerUpload:
    upload = AnswerUpload.objects.filter(question_set=question_set, pk=upload_id).first()
    if upload is None:
        raise NotFound("No such upload for this question set.")
    return upload


def progress(upload: AnswerUpload) -> dict[str, Any]:
    """What the progress bar and the API show (the shape of the grading progress)."""
    final = upload.status in FINAL
    done = upload.rows if final else int(cache.get(_progress_key(upload.pk)) or 0)
    note = upload.error
    waited = (timezone.now() - upload.created_at).total_seconds()
    if not final and done == 0 and waited > 60:
        note = "No worker has taken this file for over a minute. Start one: `make worker`."
    report = upload.report or {}
    return {
        "upload": upload.pk,
        "filename": upload.filename,
        "status": upload.status,
        "status_label": upload.get_status_display(),
        "final": final,
        "done": min(done, upload.rows),
        "expected": upload.rows,
        "note": note,
        "students": report.get("students", 0),
        "answers": report.get("answers", 0),
        "mapping": report.get("mapping", {}),
        "unmapped": report.get("unmapped", []),
        "problems": report.get("problems", []),
        "problem_count": report.get("problem_count", len(report.get("problems", []))),
    }
