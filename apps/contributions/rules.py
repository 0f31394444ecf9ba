"""A proposed question, checked before anyone reviews it (pure: no database).

Parameters are written one a line: `n = 8` (fixed), `n in 8..64 step 8` (a range, drawn per
student), `n in {8, 16, 32}` (a choice). The key is a calculator expression over them (the
autograder's safe evaluator, never Python `eval`); it is evaluated on five students' draws, so a
key that does not evaluate, or gives no finite number, is refused with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from apps.autograder.rules import KeyError_, draw_params, evaluate_key

NAME = r"[a-z_][a-z0-9_]*"
_FIXED = re.compile(rf"^({NAME})\s*=\s*(\S+)$")
_RANGE = re.compile(
    rf"^({NAME})\s+in\s+(-?[\d.]+(?:e-?\d+)?)\s*\.\.\s*(-?[\d.]+(?:e-?\d+)?)(?:\s+step\s+([\d.]+(?:e-?\d+)?))?$"
)
_CHOICE = re.compile(rf"^({NAME})\s+in\s+\{{(.+)\}}$")
SAMPLES = 5


def _number(text: str) -> int | float:
    value = float(text)
    return (
        int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
    )


def parse_params(text: str) -> tuple[dict[str, Any], list[str]]:
    spec: dict[str, Any] = {}
    problems = []
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            if m := _RANGE.match(line):
                lo, hi = _number(m[2]), _number(m[3])
                step = _number(m[4]) if m[4] else 1
                if hi <= lo or step <= 0:
                    raise ValueError("a range runs from low to high with a positive step")
                spec[m[1]] = {"range": [lo, hi], "step": step}
            elif m := _CHOICE.match(line):
                spec[m[1]] = {"choice": [_number(x.strip()) for x in m[2].split(",") if x.strip()]}
            elif m := _FIXED.match(line):
                spec[m[1]] = _number(m[2])
            else:
                raise ValueError("write 'n = 8', 'n in 8..64 step 8' or 'n in {8, 16}'")
        except ValueError as exc:
            problems.append(f"line {i} ({line!r}): {exc}")
    return spec, problems


def check(
    *,
    kind: str,
    prompt: str,
    params_text: str,
    answer: str,
    rel_tol: float,
    options: Sequence[Mapping[str, Any]],
    link: str = "",
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    """(params spec, samples [{params, key}], problems by field)."""
    problems: dict[str, str] = {}
    if kind == "reframing":
        return {}, [], reframing_problems(prompt, link)
    spec, bad = parse_params(params_text)
    if bad:
        problems["params"] = "; ".join(bad)
    if len(prompt.strip()) < 20:
        problems["prompt"] = "Write the whole question (at least 20 characters)."
    missing = sorted(set(re.findall(rf"\{{({NAME})\}}", prompt)) - set(spec))
    if missing and "params" not in problems:
        problems["prompt"] = (
            f"The question shows {', '.join('{' + m + '}' for m in missing)}, which no parameter "
            "defines."
        )
    samples: list[dict[str, Any]] = []
    if kind == "numeric":
        if not 0 < rel_tol <= 0.5:
            problems["rel_tol"] = (
                "The tolerance is a fraction above 0 and at most 0.5 (0.02 = 2 %)."
            )
        if not answer.strip():
            problems["answer"] = (
                "Give the key as a calculator expression, e.g. ring_allreduce(...)."
            )
        elif "params" not in problems:
            for seed in range(SAMPLES):
                values = draw_params(spec, seed)
                try:
                    samples.append({"params": values, "key": evaluate_key(answer, values)})
                except KeyError_ as exc:
                    problems["answer"] = f"The key does not evaluate for {values}: {exc}"
                    samples = []
                    break
    elif kind == "choice":
        labels = [str(o.get("label", "")).strip() for o in options]
        if len(options) < 2 or any(not o.get("text", "").strip() for o in options):
            problems["options"] = "Give at least two options, each with its text."
        elif sum(1 for o in options if o.get("correct")) != 1:
            problems["options"] = "Mark exactly one option correct."
        elif len(set(labels)) != len(labels):
            problems["options"] = "Each option needs its own label."
        elif any(
            not o.get("correct") and not str(o.get("misconception", "")).strip() for o in options
        ):
            problems["options"] = "Name the misconception each wrong option reveals."
    else:
        problems["kind"] = "kind is numeric, choice or reframing."
    return spec, samples, problems


def options_from_text(text: str) -> list[dict[str, Any]]:
    """'a) text | misconception' lines, the correct one starting with '*' → option dicts."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        correct = line.startswith("*")
        line = line.lstrip("*").strip()
        label, _, rest = line.partition(")")
        body, _, misconception = rest.partition("|")
        out.append(
            {
                "label": label.strip().lower(),
                "text": body.strip(),
                "correct": correct,
                "misconception": misconception.strip(),
            }
        )
    return out


def reframing_problems(description: str, link: str) -> dict[str, str]:
    """A reframing describes what changes in an assignment's programmatic part and links to the
    new starter code or notebook (checked for form only: the server never opens it)."""
    problems: dict[str, str] = {}
    if len(description.strip()) < 40:
        problems["prompt"] = (
            "Describe what changes in the programmatic part and why (at least 40 characters)."
        )
    parts = urlsplit(link.strip())
    if parts.scheme != "https" or not parts.hostname or "." not in parts.hostname:
        problems["link"] = "Link the starter code or notebook with an https:// address."
    return problems
