"""Lab writes: lock a prediction (once, 409 after), run the step's instrument (refused before
the lock), submit the reflection (refused before the instrument ran), choose a context."""

from __future__ import annotations

import math
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.labs.instruments import InputError
from apps.labs.labfile import Lab, Step, shipped
from apps.labs.models import CourseLab, LabRecord, StepRecord


def course_labs(course: Course) -> list[tuple[Lab, CourseLab | None]]:
    """The labs the course runs, with their windows: those its course file lists, in the order
    they open; a course that lists none has every shipped lab, always open."""
    labs = shipped()
    windows = [w for w in CourseLab.objects.filter(course=course) if w.lab_key in labs]
    if windows:
        return [(labs[w.lab_key], w) for w in windows]
    return [(lab, None) for lab in labs.values()]


def lab_get(course: Course, key: str) -> Lab:
    lab = next((lab for lab, _ in course_labs(course) if lab.key == key), None)
    if lab is None:
        raise NotFound("No such lab in this course.")
    return lab


def _require_open(course: Course, lab: Lab) -> None:
    """Locks and submissions happen inside the lab's window (the page stays readable)."""
    w = CourseLab.objects.filter(course=course, lab_key=lab.key).first()
    now = timezone.now()
    if w is not None and now < w.opens_at:
        raise Conflict(f"{lab.title} opens {format_instant(w.opens_at, course.timezone)}.")
    if w is not None and now > w.closes_at:
        raise Conflict(f"{lab.title} closed {format_instant(w.closes_at, course.timezone)}.")


def _step(lab: Lab, number: int) -> Step:
    step = lab.step(number)
    if step is None:
        raise NotFound(f"{lab.title} has steps 1–{len(lab.steps)}.")
    return step


def record_for(course: Course, lab: Lab, student: User) -> LabRecord:
    rec, _ = LabRecord.objects.get_or_create(course=course, lab_key=lab.key, student=student)
    return rec


def _require_student(actor: User, course: Course) -> None:
    if not is_student(actor, course):
        raise NotAllowed("Labs are worked through by the course's students.")


def lock(*, actor: User, course: Course, key: str, number: int, prediction: Any) -> StepRecord:
    """Lock the student's prediction for a step. Refused (409) once locked, and before the
    previous step was submitted: the acts run in order."""
    _require_student(actor, course)
    lab = lab_get(course, key)
    step = _step(lab, number)
    _require_open(course, lab)
    choice, value = "", None
    if step.kind == "choice":
        choice = str(prediction or "").strip().upper()
        if choice not in {o.key for o in step.options}:
            raise DomainError(
                f"Choose one of {', '.join(o.key for o in step.options)}.", field="prediction"
            )
    else:
        try:
            value = float(str(prediction).replace(",", "").strip())
        except ValueError:
            raise DomainError(
                f"{prediction!r} is not a number{f' (in {step.unit})' if step.unit else ''}.",
                field="prediction",
            ) from None
        if not math.isfinite(value):
            raise DomainError("Give a finite number.", field="prediction")
    with transaction.atomic():
        rec = record_for(course, lab, actor)
        if (
            number > 1
            and not StepRecord.objects.filter(
                record=rec, number=number - 1, submitted_at__isnull=False
            ).exists()
        ):
            raise Conflict(f"Finish step {number - 1} first.")
        try:
            with transaction.atomic():
                row = StepRecord.objects.create(
                    record=rec, number=number, choice=choice, value=value
                )
        except IntegrityError:
            raise Conflict(f"Your prediction for step {number} is already locked.") from None
        audit_record(
            actor=actor,
            action="lab.locked",
            course=course,
            obj=rec,
            after={"step": number, "prediction": choice or value},
        )
    return row


def _locked(course: Course, lab: Lab, actor: User, number: int) -> StepRecord:
    row = (
        StepRecord.objects.select_for_update()
        .filter(
            record__course=course, record__lab_key=lab.key, record__student=actor, number=number
        )
        .first()
    )
    if row is None:
        raise Conflict(f"Lock your prediction for step {number} first: the instrument opens after.")
    return row


def run(
    *, actor: User, course: Course, key: str, number: int, inputs: dict[str, Any]
) -> dict[str, Any]:
    """Run the step's instrument with the student's inputs (the step's defaults for the rest);
    stores the inputs and figures in the record. Refused (409) before the prediction is locked."""
    _require_student(actor, course)
    lab = lab_get(course, key)
    step = _step(lab, number)
    allowed = {i.key for i in step.inputs}
    given = {k: v for k, v in inputs.items() if k in allowed}
    with transaction.atomic():
        row = _locked(course, lab, actor, number)
        try:
            figures = step.run(given)
        except InputError as exc:
            raise DomainError(str(exc), field=exc.field) from None
        row.inputs = {**step.defaults, **given}
        row.figures = figures
        row.ran_at = timezone.now()
        row.save(update_fields=["inputs", "figures", "ran_at"])
    return figures


def submit(
    *, actor: User, course: Course, key: str, number: int, choice: str = "", text: str = ""
) -> StepRecord:
    """Save the step's reflection; the step is done. Refused before the instrument ran."""
    _require_student(actor, course)
    lab = lab_get(course, key)
    step = _step(lab, number)
    _require_open(course, lab)
    choice, text = choice.strip().upper(), text.strip()
    if step.reflection_options and choice not in {o.key for o in step.reflection_options}:
        raise DomainError(
            f"Choose one of {', '.join(o.key for o in step.reflection_options)}.",
            field="reflection_choice",
        )
    if step.reflection_text and len(text) < 10:
        raise DomainError(
            "Write a sentence or two (at least 10 characters).", field="reflection_text"
        )
    with transaction.atomic():
        row = _locked(course, lab, actor, number)
        if row.ran_at is None:
            raise Conflict("Run the instrument first: the reflection comes after the reveal.")
        if row.submitted_at is not None:
            raise Conflict(f"Step {number} is already submitted.")
        row.reflection_choice, row.reflection_text = choice, text[:2000]
        row.submitted_at = timezone.now()
        row.save(update_fields=["reflection_choice", "reflection_text", "submitted_at"])
        if number == len(lab.steps):
            LabRecord.objects.filter(pk=row.record_id).update(completed_at=row.submitted_at)
        audit_record(actor=actor, action="lab.step_submitted", course=course, obj=row.record)
    return row


def context_set(*, actor: User, course: Course, key: str, context: str) -> LabRecord:
    _require_student(actor, course)
    lab = lab_get(course, key)
    if context not in {c["key"] for c in lab.contexts}:
        raise DomainError("Choose one of the lab's contexts.", field="context")
    rec = record_for(course, lab, actor)
    rec.context = context
    rec.save(update_fields=["context"])
    return rec


def reveal(step: Step, row: StepRecord) -> dict[str, Any]:
    """The locked prediction beside the truth: right or wrong for a choice; the gap, absolute
    and relative, for a number."""
    if step.kind == "choice":
        return {"yours": row.choice, "truth": step.answer, "right": row.choice == step.answer}
    truth = float(step.answer)
    gap = float(row.value or 0) - truth
    rel = abs(gap) / abs(truth) if truth else abs(gap)
    return {
        "yours": row.value,
        "truth": truth,
        "gap": gap,
        "relative": rel,
        "right": rel <= step.tolerance,
    }
