"""Checking a student's answers against the questions (pure)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

EMAIL = re.compile(r"^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$")


def clean_answers(
    questions: Sequence[Any], raw: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """(answers, problems by question key). `raw` values may be strings or lists (forms give
    lists for several choices). Teammates become a sorted list of lower-case e-mails."""
    answers: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for q in questions:
        value = raw.get(q.key)
        values = (
            [str(v).strip() for v in value]
            if isinstance(value, list | tuple)
            else ([] if value is None else [str(value).strip()])
        )
        values = [v for v in values if v]
        if not values:
            if q.required:
                problems[q.key] = "Please answer this question."
            continue
        if q.kind == "single":
            if len(values) != 1 or values[0] not in q.options:
                problems[q.key] = f"Choose one of: {', '.join(q.options)}."
            else:
                answers[q.key] = values[0]
        elif q.kind == "multiple":
            bad = [v for v in values if v not in q.options]
            if bad:
                problems[q.key] = f"{bad[0]!r} is not one of the choices."
            else:
                answers[q.key] = sorted(set(values), key=q.options.index)
        elif q.kind == "scale":
            if values[0] not in {"1", "2", "3", "4", "5"}:
                problems[q.key] = "Choose 1 to 5."
            else:
                answers[q.key] = int(values[0])
        elif q.kind == "teammates":
            emails = sorted({e.lower() for v in values for e in re.split(r"[,;\s]+", v) if e})
            bad = [e for e in emails if not EMAIL.match(e)]
            if bad:
                problems[q.key] = f"{bad[0]!r} is not an e-mail address."
            elif len(emails) > 5:
                problems[q.key] = "Name at most 5 people."
            else:
                answers[q.key] = emails
        else:
            answers[q.key] = values[0][:2000]
    return answers, problems


def tally(
    key: str, kind: str, options: Sequence[str], responses: Sequence[Mapping[str, Any]]
) -> tuple[int, list[tuple[str, int]]]:
    """(how many answered the question `key`, each option's or scale point's count in order;
    [] for a question without options). An empty answer is no answer; a list counts each
    choice once."""
    counts: Counter[str] = Counter()
    answered = 0
    for a in responses:
        v = a.get(key)
        if v in (None, "", []):
            continue
        answered += 1
        for item in v if isinstance(v, list) else [v]:
            counts[str(item)] += 1
    if kind in ("single", "multiple"):
        return answered, [(o, counts.get(o, 0)) for o in options]
    if kind == "scale":
        return answered, [(s, counts.get(s, 0)) for s in "12345"]
    return answered, []
