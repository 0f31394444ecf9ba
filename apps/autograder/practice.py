"""Practice sets and checked answers, as PrairieLearn's homework mode gives them: the bank marks
a set `practice: true`; a student checks one question at a time and is told at once whether it
is right, graded against their own variant with exactly the graded sets' parser, units,
tolerances and rubrics (`services.score_raw`); "new variant" draws fresh numbers to try again.
Attempts are kept; a practice set belongs to no assignment, so nothing of it reaches the
gradebook. A graded set may allow `checks` per answer before the deadline (the bank's
`checks: {allowed, keep}`): each check gives the same feedback, and the answer graded later is
the last one or the best one checked.

Practice teaches: after the course's number of wrong checks of one variant (the course file's
`policy.practice.solution_after_wrong_checks`, 3 by default), or when the student presses "Show
the solution", that variant's correct value (with its unit) and worked solution are shown, its
checks end, and the question offers a new variant. A question counts as answered correctly only
when its last check was right."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.autograder import rules, services
from apps.autograder.models import PracticeAttempt, PracticeVariant, Question
from apps.autograder.reveal import policy_of
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
    with transaction.atomic():
        shown_now = False
        if not graded:
            # The variant is locked so two checks at once count their wrong tries in turn.
            v, _ = PracticeVariant.objects.select_for_update().get_or_create(
                question=question, student=actor
            )
            if v.solution_shown_at is not None:
                raise Conflict(
                    f"{question.key}: the solution of these numbers is shown; "
                    + (
                        "take new numbers to try again."
                        if _drawn(question)
                        else "press Try again to answer it once more."
                    )
                )
            number = v.number
        else:
            number = 0
        _, keys = variant(question, actor, number)
        keys_of = {question.key: [keys]} if question.kind != Question.Kind.CHOICE else None
        result = services.score_raw([question], [{question.key: raws}], keys_of)[0][question.key]
        if not graded:
            tries = policy_of(question.question_set.course).practice_solution_after
            wrong = wrong_checks(question, actor, number) + (result["fraction"] < 1)
            if tries and wrong >= tries:
                v.solution_shown_at = timezone.now()
                v.save(update_fields=["solution_shown_at"])
                shown_now = True
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
        detail = {k: x for k, x in result.items() if k in ("rule", "misconception", "chosen")}
        if shown_now:
            detail["solution_shown"] = True
        return PracticeAttempt.objects.create(
            question=question,
            student=actor,
            variant=number,
            answers=raws,
            fraction=result["fraction"],
            points=result["points"],
            detail=detail,
        )


def new_variant(*, actor: User, question: Question) -> int:
    """Fresh numbers for the student's next try (the number of the new variant). A question
    with fixed numbers (or options) gets a fresh try of the same numbers once its solution has
    been shown, so it is never locked for good: its wrong checks count again from zero."""
    _require(actor, question)
    with transaction.atomic():
        v, _ = PracticeVariant.objects.select_for_update().get_or_create(
            question=question, student=actor
        )
        if not _drawn(question) and v.solution_shown_at is None:
            raise Conflict(
                f"{question.key} has fixed numbers: keep answering it; once its solution is "
                "shown you may try it again."
            )
        v.number += 1
        v.solution_shown_at = None
        v.save(update_fields=["number", "solution_shown_at"])
    return v.number


def wrong_checks(q: Question, student: User, number: int) -> int:
    """Checks of this variant that were not fully right."""
    return PracticeAttempt.objects.filter(
        question=q, student=student, variant=number, fraction__lt=1
    ).count()


@dataclass
class Solution:
    """A variant's correct answer as the student reads it: each part's value with its unit (or
    the correct option), and the calculator's worked steps."""

    variant: int
    parts: list[dict[str, Any]] = field(default_factory=list)
    worked: list[list[str]] = field(default_factory=list)


def solution_of(q: Question, student: User, number: int) -> Solution:
    params, keys = variant(q, student, number)
    out = Solution(variant=number)
    if q.kind == Question.Kind.CHOICE:
        out.parts = [
            {"label": "answer", "value": f"({o['label']}) {o['text']}", "unit": ""}
            for o in q.options
            if o.get("correct")
        ]
        return out
    for n, part in enumerate(q.parts or []):
        key = keys[n] if n < len(keys) else math.nan
        unit = str(part.get("unit") or "")
        out.parts.append(
            {
                "label": str(part.get("label") or f"part {n + 1}"),
                "value": None if math.isnan(key) else key,
                "unit": "" if unit == "fraction" else unit,
            }
        )
    try:
        out.worked = services.worked_solution(q, params)
    except rules.KeyError_:
        out.worked = []
    return out


def solution_shown(q: Question, student: User) -> Solution | None:
    """The solution of the student's current variant if it has been shown, else None."""
    v = PracticeVariant.objects.filter(question=q, student=student).first()
    if v is None or v.solution_shown_at is None:
        return None
    return solution_of(q, student, v.number)


def solution_show(*, actor: User, question: Question) -> Solution:
    """The student gives up on this variant ("Show the solution"): its correct value and
    worked solution are shown and its checks end; a new variant starts afresh. Practice sets
    only (a graded set's key waits for its release). Locks the student's variant row."""
    _require(actor, question)
    if not question.question_set.practice:
        raise Conflict(
            "Solutions are shown in practice sets only; this set's come with its results."
        )
    with transaction.atomic():
        v, _ = PracticeVariant.objects.select_for_update().get_or_create(
            question=question, student=actor
        )
        if v.solution_shown_at is None:
            v.solution_shown_at = timezone.now()
            v.save(update_fields=["solution_shown_at"])
    return solution_of(question, actor, v.number)


def last_attempts(question_set: Any, student: User) -> dict[int, tuple[PracticeAttempt, int]]:
    """{question id: (the latest attempt, how many attempts)} in one query."""
    out: dict[int, tuple[PracticeAttempt, int]] = {}
    for a in PracticeAttempt.objects.filter(
        question__question_set=question_set, student=student
    ).order_by("-at", "-pk"):
        latest, n = out.get(a.question_id, (a, 0))
        out[a.question_id] = (latest, n + 1)
    return out
