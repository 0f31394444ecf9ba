"""Regrade requests, as Gradescope users expect them: a student asks about one graded question
(a part of it, optionally) with a reason, until `regrade_days` after the results are released;
staff see the queue oldest first with the answer, the key, the rubric and the reason; a TA
re-scores (the new points replace the grade now and in every later pass, so the results, the
gradebook and the exports follow) or declines, with a comment the student is e-mailed. Every
step is audited; at most one open request per student and question (a partial unique index).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.autograder.models import Grade, Question, QuestionSet, RegradeRequest
from apps.autograder.selectors import released_run, visible_grades
from apps.core import outbox
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.timefmt import format_instant


def window_closes(qs: QuestionSet) -> dt.datetime | None:
    return qs.released_at + dt.timedelta(days=qs.regrade_days) if qs.released_at else None


def require_open(qs: QuestionSet) -> None:
    """Conflict unless the set's results are out and its regrade window has not closed."""
    now = timezone.now()
    closes = window_closes(qs)
    if closes is None or qs.released_at is None or qs.released_at > now:
        raise Conflict("Results of this set are not released yet; nothing to regrade.")
    if now > closes:
        when = format_instant(closes, qs.course.timezone)
        raise Conflict(
            f"Regrade requests for this set closed {when} (after {qs.regrade_days} days)."
        )


def _grade(question: Question, student: User) -> Grade | None:
    run = released_run(question.question_set)
    return visible_grades(run).filter(question=question, student=student).first()


def request_create(
    *, actor: User, question: Question, reason: str, part: int | None = None
) -> RegradeRequest:
    qs = question.question_set
    if not is_student(actor, qs.course):
        raise NotAllowed("Only the course's students ask for regrades.")
    require_open(qs)
    reason = reason.strip()
    if len(reason) < 10:
        raise DomainError(
            "Say what you think was graded wrong and why (at least a sentence).", field="reason"
        )
    if part is not None and not 0 <= part < max(len(question.parts), 1):
        raise DomainError(f"{question.key} has no part {part + 1}.", field="part")
    grade = _grade(question, actor)
    if grade is None:
        raise Conflict("You have no grade on this question to regrade.")
    try:
        with transaction.atomic():
            r = RegradeRequest.objects.create(
                question=question,
                student=actor,
                part=part,
                reason=reason[:2000],
                old_points=grade.score,
            )
            audit_record(
                actor=actor,
                action="grading.regrade_requested",
                course=qs.course,
                obj=r,
                after={"question": question.key, "part": part, "points": grade.score},
            )
    except IntegrityError:
        raise Conflict(
            "You already have an open request on this question; staff will answer it."
        ) from None
    return r


def queue(course: Course, *, status: str = "open") -> QuerySet[RegradeRequest]:
    """Staff's queue, oldest first."""
    rows = RegradeRequest.objects.filter(question__question_set__course=course)
    if status:
        rows = rows.filter(status=status)
    return rows.select_related("question__question_set", "student", "decided_by").order_by(
        "created_at", "id"
    )


def decide(
    *,
    actor: User,
    course: Course,
    request_id: int,
    points: float | None,
    comment: str,
) -> RegradeRequest:
    """Re-score (points given) or decline (points None); the comment is required either way."""
    if not is_staff(actor, course):
        raise NotAllowed("Only course staff decide regrade requests.")
    comment = comment.strip()
    if not comment:
        raise DomainError("Tell the student why, in a sentence.", field="comment")
    with transaction.atomic():
        r = (
            RegradeRequest.objects.select_for_update()
            .select_related("question__question_set", "student")
            .filter(pk=request_id, question__question_set__course=course)
            .first()
        )
        if r is None:
            raise NotFound("No such regrade request in this course.")
        if r.status != RegradeRequest.Status.OPEN:
            raise Conflict(f"This request was already {r.get_status_display().lower()}.")
        q = r.question
        if points is not None and not 0 <= points <= q.points:
            raise DomainError(f"Points are 0 to {q.points:g} for {q.key}.", field="points")
        r.status = (
            RegradeRequest.Status.DECLINED if points is None else RegradeRequest.Status.RESCORED
        )
        r.new_points, r.comment = points, comment[:2000]
        r.decided_by, r.decided_at = actor, timezone.now()
        r.save()
        if points is not None:
            grade = _grade(q, r.student)
            if grade is not None:
                grade.score = points
                grade.detail = {**grade.detail, "regrade": regrade_detail(r)}
                grade.save(update_fields=["score", "detail"])
        audit_record(
            actor=actor,
            action="grading.regrade_" + r.status,
            course=course,
            obj=r,
            before={"points": r.old_points},
            after={"points": points, "comment": r.comment},
        )
        pk = r.pk
        enqueue_on_commit(
            lambda: task_named("autograder.email_regrade").delay(pk),
            what="the regrade e-mail",
            critical=False,
        )
    return r


def regrade_detail(r: RegradeRequest) -> dict[str, Any]:
    return {"request": r.pk, "points": r.new_points, "by": str(r.decided_by), "comment": r.comment}


def overrides(question_set: QuestionSet) -> dict[tuple[int, int], RegradeRequest]:
    """Re-scored requests by (question, student): every later pass keeps their points."""
    rows = RegradeRequest.objects.filter(
        question__question_set=question_set, status=RegradeRequest.Status.RESCORED
    ).order_by("decided_at")
    return {(r.question_id, r.student_id): r for r in rows.select_related("decided_by")}


def email_decision(request_id: int) -> None:
    r = (
        RegradeRequest.objects.select_related("question__question_set__course", "student")
        .filter(pk=request_id)
        .first()
    )
    if r is None:
        return
    qs = r.question.question_set
    course = qs.course
    outcome = (
        f"re-scored: {r.old_points:g} → {r.new_points:g} points"
        if r.status == RegradeRequest.Status.RESCORED
        else f"declined: the {r.old_points:g} points stand"
    )
    mail = outbox.Mail(
        [r.student.email],
        f"[{course.code}] Your regrade request on {qs.title} {r.question.key}: {r.status}",
        f"Your request on {qs.title}, question {r.question.key}, was {outcome}.\n\n"
        f"Staff's comment: {r.comment}\n\n"
        f"{settings.SITE_URL.rstrip('/')}/c/{course.code}/questions/{qs.key}/",
    )
    outbox.post("autograder.email_regrade", [mail], course_id=course.pk)
