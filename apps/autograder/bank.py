"""Load a question set from a YAML bank file (courses/banks/*.yaml); re-loading updates in place."""

from __future__ import annotations

import copy
import functools
import math
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from apps.autograder import written
from apps.autograder.banklint import bank_problems
from apps.autograder.models import Instance, Question, QuestionSet, RubricItem
from apps.autograder.services import keys_for
from apps.calendar.models import Assignment
from apps.core.errors import DomainError
from apps.core.models import Course

BANKS = Path(__file__).resolve().parents[2] / "courses" / "banks"


class BankError(DomainError):
    """A bank file that does not agree with itself; `problems` names each question."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            f"{path.name} was not loaded ({len(problems)} problem(s)): " + "; ".join(problems)
        )


def bank_load(*, course: Course, path: Path) -> QuestionSet:
    """Check the whole bank (apps.autograder.banklint) and load it, or refuse it whole. Keys of
    students' drawn instances are computed again from their parameters (which stay: students
    have seen them) whenever a question changes."""
    spec, problems = bank_checked(path.read_text(encoding="utf-8"))
    if problems:
        raise BankError(path, list(problems))
    spec = copy.deepcopy(spec)  # the cached parse stays as the file said
    with transaction.atomic():
        assignment = (
            Assignment.objects.filter(course=course, code=spec["assignment"]).first()
            if spec.get("assignment")
            else None
        )
        qs, _ = QuestionSet.objects.update_or_create(
            course=course,
            key=spec["key"],
            defaults={
                "title": spec["title"],
                "assignment": assignment,
                "practice": bool(spec.get("practice", False)),
                "checks": int((spec.get("checks") or {}).get("allowed", 0)),
                "checks_keep": str((spec.get("checks") or {}).get("keep", "last")),
            },
        )
        declared = spec.get("rubrics") or {}
        for pos, q in enumerate(spec["questions"], start=1):
            rubric, rubric_spec = _rubric(q.get("rubric", "mean"), declared)
            if q["kind"] == "written":
                rubric, rubric_spec = (
                    "written",
                    {
                        "scoring": q.get("scoring", "positive"),
                        "max_chars": q.get("max_chars", 2000),
                    },
                )
            question, _ = Question.objects.update_or_create(
                question_set=qs,
                key=q["key"],
                defaults={
                    "position": pos,
                    "kind": q["kind"],
                    "prompt": q["prompt"],
                    "goal": q.get("goal", ""),
                    "points": q.get("points", 1),
                    "params": q.get("params", {}),
                    "parts": q.get("parts", []),
                    "rel_tol": q.get("rel_tol", 0.02),
                    "abs_tol": q.get("abs_tol", 0.0),
                    "partial": q.get("partial", []),
                    "rubric": rubric,
                    "rubric_spec": rubric_spec,
                    "options": q.get("options", []),
                },
            )
            _rekey(question)
            if question.kind == Question.Kind.WRITTEN:
                _sync_items(question, q["rubric_items"])
    return qs


@functools.lru_cache(maxsize=32)
def bank_checked(text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A bank's text parsed and checked (its problems; none: it loads), remembered by its text:
    the check evaluates every key and worked solution, and the start-up check, `load_course` and
    the demo read the same few banks in one process. A changed file is a new text, checked anew.
    Callers copy the spec before changing it."""
    try:
        spec: dict[str, Any] = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return {}, (f"not valid YAML ({exc})",)
    return spec, tuple(bank_problems(spec))


def _sync_items(question: Question, items: list[dict[str, Any]]) -> None:
    """The file's rubric items, by key: new ones added, changed ones updated (every answer they
    are applied to re-scored); an item gone from the file stays while it is applied to anyone."""
    written.lock_written(question.question_set)
    kept = {i.key: i for i in question.rubric_items.all()}
    affected: set[int] = set()
    for pos, item in enumerate(items, start=1):
        fields = {
            "position": pos,
            "points": float(item["points"]),
            "comment": str(item["comment"]).strip(),
        }
        found = kept.pop(str(item["key"]), None)
        if found is None:
            RubricItem.objects.create(question=question, key=str(item["key"]), **fields)
        elif any(getattr(found, k) != v for k, v in fields.items()):
            RubricItem.objects.filter(pk=found.pk).update(**fields)
            affected |= set(found.marks.values_list("student_id", flat=True))
    for gone in kept.values():
        if not gone.marks.exists():
            gone.delete()
    written.rescore(question, affected)


def _rubric(name: str, declared: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A question's rubric: one the bank declares (its base rule, words and unit-slip choice)
    or a base rule by name."""
    d = declared.get(name)
    if d is None:
        return name, {}
    return str(d["base"]), {
        "name": name,
        "text": str(d.get("text", "")),
        "unit_slip": bool(d.get("unit_slip", False)),
    }


def _rekey(question: Question) -> None:
    """Stored instance keys follow the question's current parts (units, expressions)."""
    changed = []
    for inst in Instance.objects.filter(question=question):
        keys = keys_for(question, inst.params)
        if len(keys) != len(inst.keys) or any(
            not (a == b or (math.isnan(a) and math.isnan(b)))
            for a, b in zip(keys, inst.keys, strict=False)
        ):
            inst.keys = keys
            changed.append(inst)
    Instance.objects.bulk_update(changed, ["keys"], batch_size=1000)


def demo_banks_load(*, course: Course) -> list[QuestionSet]:
    return [bank_load(course=course, path=p) for p in sorted(BANKS.glob("*.yaml"))]
