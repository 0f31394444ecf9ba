"""The grader's rules as pure functions: reading answers, scoring with tolerance and partial
credit, drawing per-student parameters, and evaluating keys as safe expressions.

Scoring is vectorised (numpy) so a batch of answers is graded in one pass; the scalar helpers
call the same code with arrays of one.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from simpleeval import EvalWithCompoundTypes

from apps.perfcalc.calc import units
from apps.perfcalc.calc.core import Result
from apps.perfcalc.calc.evaluate import evaluate
from apps.perfcalc.calc.registry import all_formulas

DEFAULT_REL_TOL = 0.02

# ---------------------------------------------------------------- answers


@dataclass(frozen=True)
class Parsed:
    status: str  # "ok" | "blank" | "unparseable"
    value: float | None
    raw: str
    why: str = ""  # for an unparseable answer: what is wrong with it


def parse_answer(raw: object, unit: str = "") -> Parsed:
    """An answer in the part's unit: a bare number is read in that unit ('38.2' for a part in
    ms is 38.2 ms); a number with a compatible unit is converted ('0.0382 s' → 38.2); '35%' for
    fractions; blank → no answer; anything else → unparseable, the raw text and the reason kept
    (an incompatible unit names the expected one)."""
    text = "" if raw is None else str(raw).strip()
    if not text:
        return Parsed("blank", None, "")
    try:
        dim, size = units.resolve(unit)
    except units.UnitError:
        dim, size = "", 1.0
    try:
        value = units.parse_number(text)
    except units.UnitError:
        try:
            value = units.parse(text, dim) / size
        except units.UnitError as exc:
            why = str(exc)
            if unit and unit != dim:  # name the part's own unit, not its dimension's base
                why = why.split("; this field takes")[0] + f"; this answer is in {unit}"
            return Parsed("unparseable", None, text, why)
    if not math.isfinite(value):
        return Parsed("unparseable", None, text, "not a finite number")
    return Parsed("ok", value, text)


# ---------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Band:
    """Credit `fraction` of the points when the relative error is within `rel` (or the absolute
    error within `abs`)."""

    fraction: float
    rel: float = 0.0
    abs: float = 0.0


def default_bands(rel_tol: float = DEFAULT_REL_TOL, abs_tol: float = 0.0) -> tuple[Band, ...]:
    return (Band(1.0, rel_tol, abs_tol),)


def score_numeric(values: np.ndarray, keys: np.ndarray, bands: Sequence[Band]) -> np.ndarray:
    """Fraction of credit per answer: the best band whose tolerance holds. NaN (no answer or
    unparseable) scores 0. Vectorised over answers."""
    values = np.asarray(values, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.float64)
    err = np.abs(values - keys)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(keys != 0, err / np.abs(keys), np.where(err == 0, 0.0, np.inf))
    credit = np.zeros(values.shape, dtype=np.float64)
    for b in sorted(bands, key=lambda b: b.fraction):
        ok = (rel <= b.rel + 1e-12) | (err <= b.abs)
        credit = np.where(ok & ~np.isnan(values), np.maximum(credit, b.fraction), credit)
    return credit


def score_choice(chosen: Sequence[str], correct: set[str]) -> np.ndarray:
    return np.array([1.0 if (c or "").strip().lower() in correct else 0.0 for c in chosen])


# Each multi-part rubric, named as the pages and the report show it. The "secondary" rule is the
# one a reviewer may want to look at: it gives credit without either part being right.
RUBRICS = {
    "mean": "Each part's credit (full tolerance or a partial band), averaged.",
    "two_part": "2 points when both parts are within tolerance; 1 when one part is, or (secondary "
    "rule) when both are within the partial band, e.g. 20 %; else 0.",
    "two_part_ratio": "2 points when both parts are within tolerance; 1 when one part is, or "
    "(secondary rule) when the two answers stand in the key's ratio within tolerance: the method "
    "applied to both with one slip they share, such as a unit off by 10³; else 0.",
}
SECONDARY = {"two_part": "both within the partial band", "two_part_ratio": "same ratio as the key"}
UNIT_SLIP = "one unit slip both parts share"  # the declared `unit_slip: true` rule


def score_two_part_rules(
    credits_a: np.ndarray,
    credits_b: np.ndarray,
    *,
    rubric: str = "two_part",
    values: tuple[np.ndarray, np.ndarray] | None = None,
    keys: tuple[np.ndarray, np.ndarray] | None = None,
    ratio_tol: float = 0.1,
    unit_slip: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A 2-point, two-part item (the quiz's Q6 and Q7): the fraction of its points for each
    answer, and the rule that gave it ("both parts", "one part", the rubric's secondary rule,
    or "none")."""
    a_full, b_full = credits_a >= 1.0, credits_b >= 1.0
    both = a_full & b_full
    one = (a_full | b_full) & ~both
    if rubric == "two_part_ratio" and values is not None and keys is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (values[0] / values[1]) / (keys[0] / keys[1])
        secondary = np.isfinite(ratio) & (np.abs(ratio - 1.0) <= ratio_tol + 1e-12) & ~both & ~one
    else:
        secondary = (credits_a > 0) & (credits_b > 0) & ~both & ~one
    slip = np.zeros(credits_a.shape, dtype=bool)
    if unit_slip and values is not None and keys is not None:
        slip = same_power_of_ten_slip(values, keys, ratio_tol) & ~both & ~one & ~secondary
    fraction = np.where(both, 1.0, np.where(one | secondary | slip, 0.5, 0.0))
    rule = np.where(
        both,
        "both parts",
        np.where(
            one,
            "one part",
            np.where(
                secondary,
                SECONDARY.get(rubric, SECONDARY["two_part"]),
                np.where(slip, UNIT_SLIP, "none"),
            ),
        ),
    )
    return fraction, rule


def same_power_of_ten_slip(
    values: tuple[np.ndarray, np.ndarray], keys: tuple[np.ndarray, np.ndarray], tol: float
) -> np.ndarray:
    """Both answers off from their keys by the same power of ten (10^k, k ≠ 0), each within
    `tol` once scaled back: the method right for both, one unit slip they share."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ka = np.round(np.log10(np.abs(values[0] / keys[0])))
        kb = np.round(np.log10(np.abs(values[1] / keys[1])))
        ok_a = np.abs(values[0] / 10.0**ka - keys[0]) <= tol * np.abs(keys[0]) + 1e-12
        ok_b = np.abs(values[1] / 10.0**kb - keys[1]) <= tol * np.abs(keys[1]) + 1e-12
    return np.isfinite(ka) & np.isfinite(kb) & (ka == kb) & (ka != 0) & ok_a & ok_b


def rubric_text(rubric: str, spec: Mapping[str, Any] | None) -> str:
    """What a question's scoring rule says, as pages and the report show it: the bank's own
    words when it declares the rubric, else the base rule's."""
    if spec and spec.get("text"):
        slip = "; a shared unit slip earns the partial credit" if spec.get("unit_slip") else ""
        return str(spec["text"]) + (slip if slip and "slip" not in str(spec["text"]) else "")
    return RUBRICS.get(rubric, "")


def score_two_part(
    credits_a: np.ndarray, credits_b: np.ndarray, *, full_band: float = 1.0
) -> np.ndarray:
    """The Q6 rubric's fraction alone: 2 for both right, 1 for one right or both within the
    partial band, else 0 (as a fraction of 2 points)."""
    return score_two_part_rules(credits_a, credits_b)[0]


# ---------------------------------------------------------------- parameters


def seed_for(course: str, assignment: str, question: str, student: str) -> int:
    """Stable per-student seed: the same four strings always give the same parameters."""
    digest = hashlib.sha256(
        f"{course}\x1f{assignment}\x1f{question}\x1f{student}".encode()
    ).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)  # fits a signed 64-bit column


def draw_params(spec: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """spec: {name: value} fixed, {name: {"range": [lo, hi], "step": s}} or {name: {"choice":
    [...]}}.
    Each name draws from its own stream of the seed, so adding a parameter never changes the
    values of the others."""
    out: dict[str, Any] = {}
    for name in sorted(spec):
        rule = spec[name]
        rng = np.random.default_rng(
            [seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")]
        )
        if isinstance(rule, dict) and "range" in rule:
            lo, hi = rule["range"]
            step = rule.get("step", 1)
            n = round((hi - lo) / step) + 1
            value = lo + step * int(rng.integers(0, n))
            out[name] = round(value, 10) if isinstance(step, float) else value
        elif isinstance(rule, dict) and "choice" in rule:
            out[name] = rule["choice"][int(rng.integers(0, len(rule["choice"])))]
        else:
            out[name] = rule
    return out


# ---------------------------------------------------------------- keys as safe expressions


def _calc_functions(*, results: bool = False) -> dict[str, Any]:
    """Every calculator formula as a function of keyword arguments returning its value, e.g.
    ring_allreduce(message_bytes=M, n_gpus=N, bandwidth_bytes_per_s=B) — or, with `results`,
    the calculator's whole Result (equation and steps) for a worked solution. Both go through
    `evaluate()`, so a key may say model=… and gpu=…, and the worked solution resolves them
    exactly as grading does."""

    def value_of(name: str) -> Any:
        return lambda **kw: evaluate(name, kw).value

    def result_of(name: str) -> Any:
        return lambda **kw: evaluate(name, kw)

    call = result_of if results else value_of
    funcs: dict[str, Any] = {name.replace("-", "_"): call(name) for name in all_formulas()}
    funcs.update(
        {
            "ceil": math.ceil,
            "floor": math.floor,
            "sqrt": math.sqrt,
            "log2": math.log2,
            "min": min,
            "max": max,
            "abs": abs,
            "round": round,
        }
    )
    return funcs


_PARSE_LOCK = threading.Lock()


@lru_cache(maxsize=4096)
def _parsed_locked(expression: str) -> Any:
    return EvalWithCompoundTypes.parse(expression)


def _parsed(expression: str) -> Any:
    """The expression's syntax tree, parsed once. CPython 3.11's `ast.parse` is not safe from
    several threads at once ("AST constructor recursion depth mismatch"), so parsing is
    serialised; evaluating the tree is not."""
    with _PARSE_LOCK:
        return _parsed_locked(expression)


class KeyError_(ValueError):
    pass


def evaluate_key(expression: str, params: Mapping[str, Any]) -> float:
    """The key of a question for one set of parameters. Raises KeyError_ with the reason."""
    evaluator = EvalWithCompoundTypes(names=dict(params), functions=_calc_functions())
    try:
        value = evaluator.eval(expression, previously_parsed=_parsed(expression))
    except Exception as exc:
        raise KeyError_(f"{expression!r}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise KeyError_(f"{expression!r} gives {value!r}, not a finite number")
    return float(value)


# ---------------------------------------------------------------- worked solutions

_SINGLE_CALL = re.compile(r"\s*(\w+)\((.*)\)\s*", re.S)


def part_size(part: Mapping[str, Any]) -> float:
    """How big the part's unit is in its dimension's SI base ('ms' → 1e-3; unknown → 1)."""
    try:
        return units.resolve(str(part.get("unit", "")))[1]
    except units.UnitError:
        return 1.0


def in_part_unit(part: Mapping[str, Any], spec: Any, params: Mapping[str, Any]) -> float:
    """A key or bound in the part's unit: a calculator expression (a string) is computed in SI
    and converted; a plain number is already in the part's unit."""
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return float(spec)
    return evaluate_key(str(spec), params) / part_size(part)


def worked_steps(parts: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> list[list[str]]:
    """Per part, the calculator's worked solution when the key is a single formula call
    (e.g. ring_allreduce(...)); otherwise the expression with its parameters. The call is
    evaluated by the same functions as `evaluate_key` (model=…, gpu=… resolved the same way),
    so a key that grades has a worked solution; one that cannot be computed raises KeyError_
    with the reason (a bank load refuses it: apps.autograder.banklint)."""
    out = []
    for part in parts:
        expr = str(part.get("answer") or "")
        m = _SINGLE_CALL.fullmatch(expr)
        if m and m.group(1).replace("-", "_") in {n.replace("-", "_") for n in all_formulas()}:
            evaluator = EvalWithCompoundTypes(
                names=dict(params), functions=_calc_functions(results=True)
            )
            try:
                result = evaluator.eval(expr, previously_parsed=_parsed(expr))
            except Exception as exc:
                raise KeyError_(f"{expr!r}: {exc}") from None
            if isinstance(result, Result):
                steps = [result.equation, *result.steps]
                if part_size(part) != 1.0:  # the calculator works in SI; the answer is not
                    converted = in_part_unit(part, expr, params)
                    unit = str(part.get("unit", ""))
                    steps.append(f"In {unit}, the unit this part is answered in: {converted:.6g}")
                out.append(steps)
                continue
        out.append(
            [f"key = {expr}" + (f" with {dict(params)}" if params else "")]
            if expr
            else ["measurement: checked against the physical bound"]
        )
    return out
