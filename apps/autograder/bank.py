"""Load a question set from a YAML bank file (courses/banks/*.yaml); re-loading updates in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from apps.autograder.models import Question, QuestionSet
from apps.calendar.models import Assignment
from apps.core.models import Course

BANKS = Path(__file__).resolve().parents[2] / "courses" / "banks"


def bank_load(*, course: Course, path: Path) -> QuestionSet:
    spec: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    with transaction.atomic():
        assignment = (
            Assignment.objects.filter(course=course, code=spec["assignment"]).first()
            if spec.get("assignment")
            else None
        )
        qs, _ = QuestionSet.objects.update_or_create(
            course=course,
            key=spec["key"],
            defaults={"title": spec["title"], "assignment": assignment},
        )
        for pos, q in enumerate(spec["questions"], start=1):
            Question.objects.update_or_create(
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
                    "rubric": q.get("rubric", "mean"),
                    "options": q.get("options", []),
                },
            )
    return qs


def demo_banks_load(*, course: Course) -> list[QuestionSet]:
    return [bank_load(course=course, path=p) for p in sorted(BANKS.glob("*.yaml"))]
