"""Practice sets and checked answers, as PrairieLearn's homework mode gives them: the bank marks
a set `practice: true`; a student checks one question at a time and is told at once whether it
is right, graded against their own variant with exactly the graded sets' parser, units,
tolerances and rubrics (`services.score_raw`); "new variant" draws fresh numbers to try again.
Attempts are kept; a practice set belongs to no assignment, so nothing of it reaches the
gradebook. A graded set may allow `checks` per answer before the deadline (the bank's
`checks: {allowed, keep}`): each check gives the same feedback, and the answer graded later is
the last one or the best one checked."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.autograder import rules, services
from apps.autograder.models import PracticeAttempt, PracticeVariant, Question
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import User
from apps.core.permissions import is_student


def _drawn(q: Question) -> bool:
    return any(isinstance(v, dict) for v in (q.params or {}).values())


def variant_of(q: Question, student: User) -> int:
    v = PracticeVariant.objects.filter(question=q, student=student).first()
    return v.number if v else 0


def variant(q: Question, student: User, number: int) -> tuple[dict[str, Any], list[float]]:
    """(parameters, keys) of the student's variant `number` (0: their own stored instance)."""
    if not _drawn(q):
        return dict(q.params or {}), services.fixed_keys(q) if q.parts else []
    if number == 0:
        inst = services.instance_for(q, student)
        return dict(inst.params), list(inst.keys)
    qs = q.question_set
    seed = rules.seed_for(qs.course.code, qs.key, q.key, f"{student.pk}#v{number}")
    params = rules.draw_params(q.params, seed)
    return params, services.keys_for(q, params)


def _require(actor: User, q: Question) -> None:
    qs = q.question_set
    if not qs.practice and not qs.checks:
        raise Conflict("This set takes no checks: save your answers; they are graded later.")
    if not is_student(actor, qs.course):
        raise NotAllowed("Only the course's students practise; staff see the keys.")
    if q.kind == Question.Kind.WRITTEN:
        raise DomainError("Written answers are graded by hand.", field="answers")


def checks_left(q: Question, student: User) -> int | None:
    """A graded set's checks this student has left on `q` (None: unlimited, a practice set)."""
    qs = q.question_set
    if qs.practice:
        return None
    used = PracticeAttempt.objects.filter(question=q, student=student).count()
    return max(qs.checks - used, 0)


def check(*, actor: User, question: Question, answers: dict[int, str]) -> PracticeAttempt:
    """Grade one question's answer at once and keep the attempt."""
    _require(actor, question)
    n_parts = max(len(question.parts), 1)
    raws = [str(answers.get(p, "") or "") for p in range(n_parts)]
    if not any(r.strip() for r in raws):
        raise DomainError(f"{question.key}: type an answer to check.", field="answers")
    for part, raw in enumerate(raws):
        parsed = services._parse(question, part, raw)
        if parsed.status == "unparseable":
            where = f"part {part + 1}: " if n_parts > 1 else ""
            raise DomainError(
                f"{question.key}: {where}{parsed.raw!r}: {parsed.why or 'not a number'}.",
                field="answers",
            )
    graded = not question.question_set.practice
    number = 0 if graded else variant_of(question, actor)
    _, keys = variant(question, actor, number)
    keys_of = {question.key: [keys]} if question.kind != Question.Kind.CHOICE else None
    result = services.score_raw([question], [{question.key: raws}], keys_of)[0][question.key]
    with transaction.atomic():
        if graded:
            # A graded set's checks are counted under a lock, and the answer that is graded
            # follows the set's rule: the last one saved, or the best one checked.
            PracticeVariant.objects.select_for_update().get_or_create(
                question=question, student=actor
            )
            if checks_left(question, actor) == 0:
                raise Conflict(
                    f"{question.key}: you have used your {question.question_set.checks} checks; "
                    "you can still save a changed answer."
                )
            best = (
                PracticeAttempt.objects.filter(question=question, student=actor)
                .order_by("-fraction")
                .values_list("fraction", flat=True)
                .first()
            )
            keep_old = question.question_set.checks_keep == "best" and (
                best is not None and best > result["fraction"]
            )
            if not keep_old:
                services.answer_submit(
                    actor=actor, question=question, answers=dict(enumerate(raws)), source="check"
                )
        return PracticeAttempt.objects.create(
            question=question,
            student=actor,
            variant=number,
            answers=raws,
            fraction=result["fraction"],
            points=result["points"],
            detail={k: v for k, v in result.items() if k in ("rule", "misconception", "chosen")},
        )


def new_variant(*, actor: User, question: Question) -> int:
    """Fresh numbers for the student's next try (the number of the new variant)."""
    _require(actor, question)
    if not _drawn(question):
        raise Conflict(f"{question.key} has fixed numbers: there is no other variant.")
    with transaction.atomic():
        v, _ = PracticeVariant.objects.select_for_update().get_or_create(
            question=question, student=actor
        )
        v.number += 1
        v.save(update_fields=["number"])
    return v.number


def last_attempts(question_set: Any, student: User) -> dict[int, tuple[PracticeAttempt, int]]:
    """{question id: (the latest attempt, how many attempts)} in one query."""
    out: dict[int, tuple[PracticeAttempt, int]] = {}
    for a in PracticeAttempt.objects.filter(
        question__question_set=question_set, student=student
    ).order_by("-at", "-pk"):
        latest, n = out.get(a.question_id, (a, 0))
        out[a.question_id] = (latest, n + 1)
    return out
