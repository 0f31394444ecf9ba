"""Writes: a student (or their whole group) proposes a question and edits it while it waits;
staff accept it (it becomes a question of the course's contributed set, graded like any bank
question), ask for changes, or reject it, with a comment. Each write is one transaction with an
audit row."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from apps.autograder.models import Question, QuestionSet
from apps.calendar.models import Assignment
from apps.contributions import rules
from apps.contributions.models import QuestionProposal
from apps.core import integrity
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.groups.models import GroupMembership
from apps.groups.selectors import group_for_student

SET_KEY = "contributed"


class ProposalProblems(DomainError):
    def __init__(self, problems: dict[str, str]) -> None:
        field, message = next(iter(problems.items()))
        super().__init__(f"{len(problems)} problem(s). {field}: {message}", field=field)
        self.problems = problems


def _checked(data: dict[str, Any], course: Course | None = None) -> dict[str, Any]:
    spec, _, problems = rules.check(
        kind=data["kind"],
        prompt=data["prompt"],
        params_text=data.get("params_text", ""),
        answer=data.get("answer", ""),
        rel_tol=float(data.get("rel_tol", 0.02)),
        options=data.get("options", []),
        link=data.get("link", ""),
    )
    if data["kind"] == "reframing":
        assignment = (
            Assignment.objects.filter(course=course, pk=data.get("assignment") or 0).first()
            if course is not None
            else None
        )
        if assignment is None:
            problems.setdefault("assignment", "Choose the assignment it reframes.")
        if problems:
            raise ProposalProblems(problems)
        return {
            "kind": "reframing",
            "prompt": data["prompt"].strip(),
            "params_text": "",
            "params": {},
            "answer": "",
            "unit": "",
            "rel_tol": 0.02,
            "options": [],
            "assignment": assignment,
            "link": data.get("link", "").strip(),
        }
    if problems:
        raise ProposalProblems(problems)
    return {
        "assignment": None,
        "link": "",
        "kind": data["kind"],
        "prompt": data["prompt"].strip(),
        "params_text": data.get("params_text", "").strip(),
        "params": spec,
        "answer": data.get("answer", "").strip() if data["kind"] == "numeric" else "",
        "unit": data.get("unit", "").strip()[:20],
        "rel_tol": float(data.get("rel_tol", 0.02)),
        "options": data.get("options", []) if data["kind"] == "choice" else [],
    }


def _declared(data: dict[str, Any]) -> dict[str, Any]:
    """The proposal's integrity declaration (external code or AI assistants used, and what)."""
    used, described = integrity.check(data.get("ai_used"), data.get("ai_description"))
    return {"ai_used": used, "ai_description": described}


def proposal_submit(
    *, actor: User, course: Course, data: dict[str, Any], as_group: bool = False
) -> QuestionProposal:
    """Propose a question; refused with every problem (a key that does not evaluate on sample
    parameters names the parameters and the error)."""
    if not is_student(actor, course):
        raise NotAllowed("Students propose questions; staff review them.")
    fields = _checked(data, course) | _declared(data)
    group = group_for_student(user=actor, course=course) if as_group else None
    if as_group and group is None:
        raise Conflict("You are in no group: propose it as yourself.")
    authors = (
        sorted(
            GroupMembership.objects.filter(group=group, left_at__isnull=True).values_list(
                "user_id", flat=True
            )
        )
        if group
        else [actor.pk]
    )
    with transaction.atomic():
        p = QuestionProposal.objects.create(course=course, proposer=actor, group=group, **fields)
        p.authors.set(authors)
        audit_record(
            actor=actor,
            action="contribution.proposed",
            course=course,
            obj=p,
            after={"kind": p.kind},
        )
    return p


def _visible(actor: User, course: Course, proposal_id: int) -> QuestionProposal:
    p = QuestionProposal.objects.select_for_update().filter(course=course, pk=proposal_id).first()
    if p is None or (not is_staff(actor, course) and not p.authors.filter(pk=actor.pk).exists()):
        raise NotFound("No such proposal.")
    return p


def proposal_of_author(*, actor: User, course: Course, proposal_id: int) -> QuestionProposal:
    """The proposal if `actor` is one of its authors (404 otherwise, before any input is read)."""
    p = QuestionProposal.objects.filter(course=course, pk=proposal_id, authors=actor).first()
    if p is None:
        raise NotFound("No such proposal.")
    return p


def proposal_update(
    *, actor: User, course: Course, proposal_id: int, data: dict[str, Any]
) -> QuestionProposal:
    """An author edits a proposal that waits (proposed, or changes requested): it goes back to
    proposed."""
    fields = _checked(data, course) | _declared(data)
    with transaction.atomic():
        p = _visible(actor, course, proposal_id)
        if is_staff(actor, course):
            raise NotAllowed("Only its authors edit a proposal.")
        if p.status not in ("proposed", "changes"):
            raise Conflict(
                f"This proposal is {p.get_status_display().lower()}; it can no longer change."
            )
        for k, v in fields.items():
            setattr(p, k, v)
        p.status = "proposed"
        p.save()
        audit_record(actor=actor, action="contribution.edited", course=course, obj=p)
    return p


def proposal_review(
    *, actor: User, course: Course, proposal_id: int, decision: str, comment: str = ""
) -> QuestionProposal:
    """accept (the question joins the contributed set), changes (back to the authors, with the
    comment), or reject. Staff only; a comment is required unless accepting."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs review proposals.")
    if decision not in ("accept", "changes", "reject"):
        raise DomainError("decision is accept, changes or reject.", field="decision")
    if decision != "accept" and not comment.strip():
        raise DomainError("Say what to change, or why not, in the comment.", field="comment")
    with transaction.atomic():
        p = _visible(actor, course, proposal_id)
        if p.status in ("accepted", "rejected"):
            raise Conflict(f"This proposal was already {p.status}.")
        before = p.status
        if decision == "accept" and p.kind == "reframing":
            pass  # credited like a question; the course adopts it in the assignment's own repo
        elif decision == "accept":
            # The proposal is checked again: the calculator may have changed since it was written.
            _checked(
                {
                    "kind": p.kind,
                    "prompt": p.prompt,
                    "params_text": p.params_text,
                    "answer": p.answer,
                    "rel_tol": p.rel_tol,
                    "options": p.options,
                    "unit": p.unit,
                }
            )
            qs, _ = QuestionSet.objects.get_or_create(
                course=course, key=SET_KEY, defaults={"title": "Student-contributed questions"}
            )
            position = (qs.questions.aggregate(m=Max("position"))["m"] or 0) + 1
            kind = Question.Kind.NUMERIC if p.kind == "numeric" else Question.Kind.CHOICE
            parts = (
                [{"label": p.unit or "answer", "unit": p.unit, "answer": p.answer}]
                if p.kind == "numeric"
                else []
            )
            p.question = Question.objects.create(
                question_set=qs,
                key=f"c{p.pk}",
                position=position,
                kind=kind,
                prompt=p.prompt,
                params=p.params,
                parts=parts,
                rel_tol=p.rel_tol,
                options=p.options,
                goal="",
            )
        p.status = {"accept": "accepted", "changes": "changes", "reject": "rejected"}[decision]
        p.staff_comment, p.reviewed_by, p.reviewed_at = comment.strip(), actor, timezone.now()
        p.save()
        audit_record(
            actor=actor,
            action=f"contribution.{p.status}",
            course=course,
            obj=p,
            before={"status": before},
            after={"status": p.status, "question": p.question_id},
        )
    return p
