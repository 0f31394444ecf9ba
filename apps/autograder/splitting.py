"""Splitting a written question's answers among graders, and how well two graders agree: pure
functions of plain values (answers numbered 1…n in the order they were first saved)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_RANGE = re.compile(r"^\s*(\d+)\s*(?:[-–]\s*(\d+))?\s*$")


def split_even(n: int, graders: int) -> list[tuple[int, int]]:
    """Answers 1…n cut into `graders` consecutive ranges whose sizes differ by at most one
    (the first ones take the extra answer); a grader with nothing to grade gets (k, k-1)."""
    if graders < 1:
        raise ValueError("Choose at least one grader.")
    size, extra = divmod(n, graders)
    out, start = [], 1
    for i in range(graders):
        count = size + (1 if i < extra else 0)
        out.append((start, start + count - 1))
        start += count
    return out


def _span(a: int, b: int) -> str:
    return f"{a}" if a == b else f"{a}–{b}"


def parse_ranges(texts: list[str], n: int) -> list[tuple[int, int]]:
    """One range per grader ("1-12", "13–20" or "7"), together covering answers 1…n once each.
    Raises ValueError naming the range, or the answers given to nobody or to two graders."""
    ranges = []
    for text in texts:
        m = _RANGE.match(text)
        if m is None:
            raise ValueError(f"{text.strip() or '(empty)'!s} is not a range like 1-12.")
        a = int(m.group(1))
        b = int(m.group(2) or a)
        if not 1 <= a <= b <= n:
            raise ValueError(f"{_span(a, b)} is not within answers 1–{n}.")
        ranges.append((a, b))
    counts = [0] * (n + 1)
    for a, b in ranges:
        for i in range(a, b + 1):
            counts[i] += 1
    twice = [i for i in range(1, n + 1) if counts[i] > 1]
    if twice:
        raise ValueError(f"Answer {twice[0]} is in two ranges; use the overlap for double grading.")
    nobody = [i for i in range(1, n + 1) if counts[i] == 0]
    if nobody:
        raise ValueError(f"Answers {_runs(nobody)} are given to nobody.")
    return ranges


def _runs(numbers: list[int]) -> str:
    runs: list[list[int]] = []
    for x in numbers:
        if runs and runs[-1][1] == x - 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return ", ".join(_span(a, b) for a, b in runs)


def overlap_picks(n: int, overlap: int) -> list[int]:
    """Which answers (1-based) are graded twice: `overlap` of them spread evenly over 1…n, so
    every grader's range gives some."""
    if not 0 <= overlap <= n:
        raise ValueError(f"The overlap is between 0 and {n} (the answers there are).")
    if overlap == 0:
        return []
    return sorted({1 + math.floor(i * n / overlap) for i in range(overlap)})


def rubric_step(item_points: list[float]) -> float:
    """One rubric step: the smallest score change any item of the rubric makes (0: no items)."""
    steps = [abs(p) for p in item_points if p]
    return min(steps) if steps else 0.0


@dataclass(frozen=True)
class Agreement:
    """Of `n` answers graded twice (both graders marked them): how many got the same score, and
    how many scores differ by at most one rubric step."""

    n: int
    exact: int
    within_step: int

    @property
    def exact_pct(self) -> float:
        return 100 * self.exact / self.n if self.n else 0.0

    @property
    def within_pct(self) -> float:
        return 100 * self.within_step / self.n if self.n else 0.0


def agreement(pairs: list[tuple[float, float]], step: float) -> Agreement:
    """Agreement of (first grader's score, second grader's score) pairs."""
    exact = sum(1 for a, b in pairs if math.isclose(a, b, abs_tol=1e-9))
    within = sum(1 for a, b in pairs if abs(a - b) <= step + 1e-9)
    return Agreement(n=len(pairs), exact=exact, within_step=within)
