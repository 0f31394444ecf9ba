"""The course grade as pure functions of plain values (no database).

A course has components (weights in percent of the course grade), some split into parts (the
parts' weights add up to their component's). Scores are percentages per *leaf* (a component
without parts, or a part). The rules, from the syllabus and `domain-rules.md`:

- the total is the weighted sum of the leaves;
- every component and part with a satisfactory threshold above 0 must reach it, or the course
  grade is F whatever the total ("fail any component, fail the course"), with the reason named;
- while a leaf has no score the grade is *incomplete*, never a silent zero;
- otherwise the letter is the first whose minimum the total reaches.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

STANDARD_CUTOFFS: tuple[tuple[str, float], ...] = (
    ("A+", 97),
    ("A", 93),
    ("A-", 90),
    ("B+", 87),
    ("B", 83),
    ("B-", 80),
    ("C+", 77),
    ("C", 73),
    ("C-", 70),
    ("D+", 67),
    ("D", 63),
    ("D-", 60),
)
EPS = 1e-9  # scores are stored with 2 decimals; compare with a hair of slack


@dataclass(frozen=True)
class Component:
    key: str
    name: str
    weight: float  # percent of the course grade
    threshold: float  # satisfactory minimum, percent of this component (0: not checked)
    parent: str | None = None


@dataclass(frozen=True)
class Shortfall:
    key: str
    name: str
    percent: float
    threshold: float

    def __str__(self) -> str:
        return (
            f"{self.name} is {fmt(self.percent)} %, below the satisfactory {fmt(self.threshold)} %"
        )


@dataclass
class CourseGrade:
    status: str  # "final" | "fail" | "incomplete"
    letter: str | None  # None while incomplete
    total: float | None  # weighted total, once every leaf has a score
    to_date: float | None  # weighted mean over the leaves scored so far
    percents: dict[str, float | None] = field(default_factory=dict)  # every component and part
    failing: list[Shortfall] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # names of leaves without a score

    @property
    def at_risk(self) -> bool:
        """Failing a component now (the course grade is or will be F unless it changes)."""
        return bool(self.failing)

    @property
    def reason(self) -> str:
        if self.failing:
            why = "; ".join(str(s) for s in self.failing)
            return f"F: {why}." if self.status == "fail" else f"At risk: {why}."
        if self.status == "incomplete":
            return "Incomplete: no score yet for " + ", ".join(self.missing) + "."
        return f"{fmt(self.total)} % → {self.letter}."


def fmt(x: float | None) -> str:
    """A percentage for people: at most one decimal, no trailing zero."""
    if x is None:
        return "—"
    return f"{x:.1f}".removesuffix(".0")


def leaves(components: Sequence[Component]) -> list[Component]:
    return list(_structure(tuple(components))[0])


@functools.lru_cache(maxsize=64)
def _structure(
    components: tuple[Component, ...],
) -> tuple[tuple[Component, ...], tuple[tuple[Component, tuple[Component, ...]], ...]]:
    """The leaves, and each component with its parts: worked out once per scheme, not once per
    student (a gradebook of 2,000 students asks 2,000 times)."""
    parents = {c.parent for c in components if c.parent}
    with_parts = tuple(
        (c, tuple(p for p in components if p.parent == c.key))
        for c in components
        if c.key in parents
    )
    return tuple(c for c in components if c.key not in parents), with_parts


def component_percents(
    components: Sequence[Component], scores: Mapping[str, float | None]
) -> dict[str, float | None]:
    """Each leaf's score, and each component with parts as the weighted mean of its parts (None
    until every part has a score)."""
    leaf_list, with_parts = _structure(tuple(components))
    out: dict[str, float | None] = {c.key: scores.get(c.key) for c in leaf_list}
    for c, parts in with_parts:
        values = [out.get(p.key) for p in parts]
        weight = sum(p.weight for p in parts)
        known = [(p.weight, v) for p, v in zip(parts, values, strict=True) if v is not None]
        if len(known) < len(parts) or weight <= 0:
            out[c.key] = None
        else:
            out[c.key] = sum(w * v for w, v in known) / weight
    return out


def letter_for(total: float, cutoffs: Sequence[tuple[str, float]]) -> str:
    """The first letter (cut-offs highest first) whose minimum `total` reaches; F below all."""
    for letter, minimum in cutoffs:
        if total + EPS >= minimum:
            return letter
    return "F"


def course_grade(
    components: Sequence[Component],
    scores: Mapping[str, float | None],
    cutoffs: Sequence[tuple[str, float]] = STANDARD_CUTOFFS,
) -> CourseGrade:
    percents = component_percents(components, scores)
    failing = [
        Shortfall(c.key, c.name, p, c.threshold)
        for c in components
        if c.threshold > 0 and (p := percents.get(c.key)) is not None and p + EPS < c.threshold
    ]
    leaf_list = leaves(components)
    known = [(c, p) for c in leaf_list if (p := percents.get(c.key)) is not None]
    missing = [c.name for c in leaf_list if percents.get(c.key) is None]
    known_weight = sum(c.weight for c, _ in known)
    earned = sum(c.weight * p for c, p in known) / 100
    to_date = earned * 100 / known_weight if known_weight > 0 else None
    if missing:
        return CourseGrade("incomplete", None, None, to_date, percents, failing, missing)
    total = earned
    if failing:
        return CourseGrade("fail", "F", total, to_date, percents, failing, [])
    return CourseGrade("final", letter_for(total, cutoffs), total, to_date, percents, [], [])


@dataclass(frozen=True)
class WhatIf:
    target: str
    needed: float | None  # the same percentage on every remaining leaf; None: out of reach
    message: str


def needed_for(
    components: Sequence[Component],
    scores: Mapping[str, float | None],
    target: str,
    cutoffs: Sequence[tuple[str, float]] = STANDARD_CUTOFFS,
) -> WhatIf:
    """What the same score on every component still without one must be for `target`: enough
    for the target's minimum total and for every satisfactory threshold the remaining scores
    touch. Out of reach when a scored component already fails or more than 100 % is needed."""
    minimum = dict(cutoffs).get(target)
    if minimum is None:
        return WhatIf(target, None, f"{target} is not one of this course's letters.")
    grade = course_grade(components, scores, cutoffs)
    if grade.failing:
        return WhatIf(
            target,
            None,
            f"Not while {grade.failing[0]}: any unsatisfactory component is an F; that score has "
            "to rise first.",
        )
    remaining = [c for c in leaves(components) if grade.percents.get(c.key) is None]
    if not remaining:
        total = grade.total or 0.0
        word = "reached" if grade.letter == target or total + EPS >= minimum else "not reached"
        return WhatIf(
            target,
            None,
            f"Every component is scored: {fmt(total)} % → {grade.letter} ({target} {word}).",
        )
    earned = (
        sum(
            c.weight * p for c in leaves(components) if (p := grade.percents.get(c.key)) is not None
        )
        / 100
    )
    open_weight = sum(c.weight for c in remaining)
    bounds = [(minimum - earned) * 100 / open_weight]
    reasons = {0: f"the {fmt(minimum)} % total for {target}"}
    open_keys = {c.key for c in remaining}
    for c in components:
        if c.threshold <= 0:
            continue
        if c.key in open_keys:
            reasons[len(bounds)] = f"the satisfactory {fmt(c.threshold)} % on {c.name}"
            bounds.append(c.threshold)
            continue
        parts = [p for p in components if p.parent == c.key]
        open_parts = [p for p in parts if p.key in open_keys]
        if open_parts:
            parts_weight = sum(p.weight for p in parts)
            done = sum(
                p.weight * (grade.percents[p.key] or 0) for p in parts if p.key not in open_keys
            )
            reasons[len(bounds)] = f"the satisfactory {fmt(c.threshold)} % on {c.name}"
            bounds.append((c.threshold * parts_weight - done) / sum(p.weight for p in open_parts))
    need = max(max(bounds), 0.0)
    why = reasons[bounds.index(max(bounds))]
    names = ", ".join(c.name for c in remaining)
    if need > 100 + EPS:
        return WhatIf(target, None, f"Out of reach: {target} would need {fmt(need)} % on {names}.")
    need = math.ceil(need * 10 - EPS) / 10
    return WhatIf(target, need, f"{fmt(need)} % on each of {names} gives {target} (set by {why}).")


def weight_problems(components: Sequence[Component]) -> list[str]:
    """Weights that do not add up, named with their sum: the top level to 100, each component's
    parts to the component's weight."""
    problems = []
    top = sum(c.weight for c in components if c.parent is None)
    if abs(top - 100) > EPS:
        problems.append(f"The components' weights add up to {fmt(top)}, not 100.")
    for c in components:
        parts = [p for p in components if p.parent == c.key]
        if parts and abs((s := sum(p.weight for p in parts)) - c.weight) > EPS:
            problems.append(f"The parts of {c.name} add up to {fmt(s)}, not its {fmt(c.weight)}.")
    for c in components:
        if not 0 <= c.weight <= 100:
            problems.append(f"{c.name}: a weight is between 0 and 100, not {fmt(c.weight)}.")
        if not 0 <= c.threshold <= 100:
            problems.append(f"{c.name}: a threshold is between 0 and 100, not {fmt(c.threshold)}.")
    return problems


def cutoff_problems(cutoffs: Sequence[tuple[str, float]]) -> list[str]:
    letters = [letter for letter, _ in cutoffs]
    problems = [
        f"{x} is listed more than once."
        for x in sorted({x for x in letters if letters.count(x) > 1})
    ]
    for (a, lo), (b, hi) in zip(cutoffs[1:], cutoffs, strict=False):
        if lo >= hi:
            problems.append(
                f"{a} ({fmt(lo)}) must be below {b} ({fmt(hi)}): list letters highest first."
            )
    for letter, minimum in cutoffs:
        if not 0 <= minimum <= 100:
            problems.append(f"{letter}: a minimum is between 0 and 100, not {fmt(minimum)}.")
    return problems


def parse_cutoffs(text: str) -> tuple[list[tuple[str, float]], list[str]]:
    """'A+ 97, A 93, A- 90' (commas or new lines) → [("A+", 97.0), …] and problems."""
    out, problems = [], []
    for chunk in text.replace("\n", ",").split(","):
        words = chunk.replace(":", " ").replace("≥", " ").split()
        if not words:
            continue
        if len(words) != 2:
            problems.append(f"{chunk.strip()!r}: write a letter and its minimum, e.g. 'A- 90'.")
            continue
        try:
            value = float(words[1].rstrip("%"))
        except ValueError:
            problems.append(f"{chunk.strip()!r}: {words[1]!r} is not a number.")
            continue
        if not math.isfinite(value):
            problems.append(f"{chunk.strip()!r}: {words[1]!r} is not a number.")
            continue
        out.append((words[0].upper(), value))
    return out, problems + cutoff_problems(out)


def parse_score(text: str) -> float:
    """A score typed by staff: 85, 85.5, 85 %, or points as 17/20. Raises ValueError naming the
    problem; the result is a percentage between 0 and 100."""
    raw = text.strip().replace(",", ".")
    try:
        if "/" in raw:
            num, den = (float(x) for x in raw.split("/", 1))
            if den <= 0:
                raise ValueError(f"{text!r}: the points possible must be above 0")
            value = num * 100 / den
        else:
            value = float(raw.removesuffix("%").strip())
    except ValueError as exc:
        if "points possible" in str(exc):
            raise
        raise ValueError(f"{text!r} is not a score (use 85, 85 % or 17/20)") from None
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise ValueError(f"{text!r} is outside 0–100 %")
    return round(value, 2)
