"""What students are graded on agrees with itself: a bank file is checked whole before it loads.

Per question: its kind and parts are well formed; each part's unit is one the units table knows;
the unit the prompt asks for ("Milliseconds per token?", "in TFLOPS") is the unit its part is
answered in; every key and bound computes to a finite number for sample parameters, and so
does the worked solution students see once results are released (through the same calculator
calls as grading); the prompt's placeholders are the question's parameters; partial
bands and the rubric are ones the grader knows; a choice question has a correct option. Every
problem names the question, so a bank with any is refused whole and nothing changes.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from apps.autograder import rules
from apps.perfcalc.calc import units

KINDS = {"numeric", "multipart", "choice", "written"}
_TOKEN = re.compile(r"[A-Za-zµμ][A-Za-z/µμ]*")
_PLACEHOLDER = re.compile(r"\{[^}]*\}")
# Time spelled as a word ("Milliseconds per token?"); the short forms (ms, s, h) are matched only
# when they stand alone, below.
_TIME_WORDS = {k.lower(): v for k, v in units.UNITS["s"].items() if len(k) > 3}


def unit_of_token(token: str) -> tuple[str, float] | None:
    """A word of a prompt that names a unit → (dimension, size); None for any other word."""
    if token.lower() in _TIME_WORDS:
        return "s", _TIME_WORDS[token.lower()]
    if len(token) < 2:
        return None
    for dim, table in units.UNITS.items():
        if dim in {"count", "s"}:
            continue
        if token in table:
            return dim, table[token]
    if token in {"ms", "us", "µs", "μs", "ns"}:
        return "s", units.UNITS["s"][token]
    return None


def asked_units(prompt: str) -> list[tuple[str, str, float]]:
    """The units a prompt asks the answer in: in its question sentence (the one ending in '?')
    and in any 'in <unit>' phrase. Words after 'per' or '/' are rates, not the answer's unit."""
    text = _PLACEHOLDER.sub(" ", prompt)
    pieces = []
    asks = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip().endswith("?")]
    if asks:
        pieces.append(asks[-1])
    pieces += re.findall(r"\bin\s+([A-Za-zµμ][A-Za-z/µμ]*)", text)
    out = []
    for piece in pieces:
        words = _TOKEN.findall(piece)
        for i, word in enumerate(words):
            if i and words[i - 1].lower() == "per":
                continue
            found = unit_of_token(word)
            if found is not None:
                out.append((word, *found))
    return out


def _sample_params(params: dict[str, Any]) -> dict[str, Any]:
    return rules.draw_params(params, rules.seed_for("lint", "lint", "lint", "lint"))


def _grid(params: dict[str, Any], limit: int = 400) -> list[dict[str, Any]]:
    """Every combination of the parameters' choices (a range: its ends and middle), up to
    `limit` of them: enough to find the draws where a key is exactly 0."""
    axes: dict[str, list[Any]] = {}
    for name, rule in params.items():
        if isinstance(rule, dict) and "choice" in rule:
            axes[name] = list(rule["choice"])
        elif isinstance(rule, dict) and "range" in rule:
            lo, hi = rule["range"]
            axes[name] = [lo, hi] if hi == lo else [lo, (lo + hi) / 2, hi]
        else:
            axes[name] = [rule]
    names = sorted(axes)
    combos = itertools.islice(itertools.product(*(axes[n] for n in names)), limit)
    return [dict(zip(names, combo, strict=True)) for combo in combos]


def _zero_key(spec: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """The first parameters (of the grid) for which the key is exactly 0, if any."""
    for drawn in _grid(params):
        try:
            if rules.evaluate_key(str(spec), drawn) == 0:
                return drawn
        except Exception:  # noqa: S112 - a draw the key cannot compute is reported elsewhere
            continue
    return None


def _computes(spec: Any, params: dict[str, Any]) -> str:
    """'' when a key or bound computes to a finite number, else why not."""
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return "" if math.isfinite(spec) else "is not finite"
    try:
        value = rules.evaluate_key(str(spec), params)
    except Exception as exc:  # a bank author's expression: report it, whatever it is
        return f"does not compute ({exc})"
    return "" if math.isfinite(value) else "is not finite"


def written_problems(q: dict[str, Any], bad: Any) -> None:
    """A written question: rubric items that can give full marks and take them, each with a
    comment; no numeric parts, unit or key to contradict it."""
    for field in ("parts", "options", "answer", "unit"):
        if q.get(field):
            bad(f"a written question has no {field} (it is graded by its rubric items)")
    try:
        points = float(q.get("points", 1))
    except (TypeError, ValueError):
        points = float("nan")
    if not math.isfinite(points) or points <= 0:
        bad("points must be a positive number")
        return
    scoring = q.get("scoring", "positive")
    if scoring not in ("positive", "negative"):
        bad(f"scoring {scoring!r} is positive (start at 0, items add) or negative (start full)")
    max_chars = q.get("max_chars", 2000)
    if not isinstance(max_chars, int) or not 20 <= max_chars <= 20000:
        bad("max_chars is a whole number from 20 to 20000")
    items = q.get("rubric_items")
    if not isinstance(items, list) or not items:
        bad("a written question needs rubric_items: [{key, points, comment}, …]")
        return
    keys: set[str] = set()
    values = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            bad(f"rubric item {n} is not a mapping of key, points and comment")
            continue
        k = str(item.get("key") or "")
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,29}", k):
            bad(f"rubric item {n}: key {k!r} is up to 30 lower-case letters, digits and dashes")
        elif k in keys:
            bad(f"rubric item {k!r} is listed twice")
        keys.add(k)
        try:
            v = float(item.get("points"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            bad(f"rubric item {k or n}: points is a number (the score change)")
            continue
        if not math.isfinite(v) or abs(v) > points:
            bad(f"rubric item {k or n}: its score change {v:g} is outside ±{points:g}")
        values.append(v)
        if not str(item.get("comment") or "").strip():
            bad(f"rubric item {k or n}: no comment for the student")
    if scoring == "positive" and values and sum(v for v in values if v > 0) < points - 1e-9:
        bad(
            f"its positive items add to {sum(v for v in values if v > 0):g}, under the question's "
            f"{points:g} points: nobody could get full marks"
        )
    if scoring == "negative" and values and not any(v < 0 for v in values):
        bad("negative scoring needs at least one item that takes points away")


def question_problems(q: dict[str, Any], rubrics: set[str]) -> list[str]:
    key = str(q.get("key") or "?")
    out: list[str] = []

    def bad(msg: str) -> None:
        out.append(f"{key}: {msg}")

    for field in ("key", "kind", "prompt"):
        if not q.get(field):
            bad(f"no {field}")
    kind = q.get("kind")
    if kind and kind not in KINDS:
        bad(f"kind {kind!r} is not one of {', '.join(sorted(KINDS))}")
    if kind == "written":
        written_problems(q, bad)
        return out
    if kind == "choice":
        options = q.get("options") or []
        if not any(o.get("correct") for o in options):
            bad("a choice question needs at least one correct option")
        return out
    parts = q.get("parts") or []
    if kind in {"numeric", "multipart"} and not parts:
        bad("a numeric question needs at least one part")
    try:
        params = _sample_params(q.get("params") or {})
    except Exception as exc:  # malformed draws
        bad(f"its parameters cannot be drawn ({exc})")
        return out
    resolved = []
    for n, part in enumerate(parts, start=1):
        unit = str(part.get("unit", ""))
        try:
            resolved.append(units.resolve(unit))
        except units.UnitError:
            bad(f"part {n}: unknown unit {unit!r} (use ms, s, GB, TB/s, TFLOP/s, fraction …)")
            resolved.append(("?", 1.0))
        if part.get("answer") in (None, "") and part.get("max") is None and part.get("min") is None:
            bad(f"part {n}: neither an answer nor a plausibility bound (min/max)")
        for field in ("answer", "max", "min"):
            if part.get(field) not in (None, ""):
                why = _computes(part[field], params)
                if why:
                    bad(f"part {n}: its {field} {why}")
        answer = part.get("answer")
        if isinstance(answer, str) and answer and not float(q.get("abs_tol") or 0):
            zero = _zero_key(answer, q.get("params") or {})
            if zero is not None:
                shown = ", ".join(f"{k}={v}" for k, v in zero.items())
                bad(
                    f"part {n}: its key is exactly 0 when {shown}, where a relative tolerance "
                    "gives no credit to any other answer; give the question an abs_tol"
                )
    if parts and not out:  # its keys compute: so must what students see once it is released
        try:
            rules.worked_steps(parts, params)
        except Exception as exc:  # a bank author's expression: report it, whatever it is
            bad(f"its worked solution cannot be computed for sample parameters ({exc})")
    try:
        str(q.get("prompt", "")).format(**params)
    except (KeyError, IndexError, ValueError) as exc:
        bad(f"its prompt names {exc} but the question has no such parameter (or a stray brace)")
    for word, dim, size in asked_units(str(q.get("prompt", ""))):
        same_dim = [(d, s) for d, s in resolved if d == dim]
        if same_dim and not any(math.isclose(s, size) for _, s in same_dim):
            shown = ", ".join(str(p.get("unit")) for p in parts)
            bad(f"the prompt asks in {word!r} but the answer is in {shown}; make them agree")
    for band in q.get("partial") or []:
        if not 0 < float(band.get("fraction", 0)) < 1:
            bad("a partial band's fraction is between 0 and 1")
    rubric = q.get("rubric", "mean")
    if rubric not in rubrics:
        bad(f"rubric {rubric!r} is not declared (known: {', '.join(sorted(rubrics))})")
    return out


def bank_problems(spec: Any) -> list[str]:
    """Every problem of a whole bank file (already parsed from YAML), each naming its question."""
    if not isinstance(spec, dict):
        return ["the file is not a mapping of key, title and questions"]
    out = [f"no {f}" for f in ("key", "title", "questions") if not spec.get(f)]
    questions = spec.get("questions") or []
    if not isinstance(questions, list):
        return [*out, "questions is not a list"]
    declared = spec.get("rubrics") or {}
    if not isinstance(declared, dict):
        return [*out, "rubrics is not a mapping of name → {base, text, unit_slip}"]
    for name, d in declared.items():
        if not isinstance(d, dict) or d.get("base") not in rules.RUBRICS:
            out.append(f"rubric {name}: base is one of {', '.join(sorted(rules.RUBRICS))}")
        elif d.get("unit_slip") and d["base"] not in rules.SECONDARY:
            out.append(f"rubric {name}: a unit-slip rule needs a two-part base")
        elif not str(d.get("text", "")).strip():
            out.append(f"rubric {name}: say in words what earns each score (text)")
    if "practice" in spec and not isinstance(spec["practice"], bool):
        out.append("practice is true or false")
    elif spec.get("practice") and spec.get("assignment"):
        out.append("a practice set belongs to no assignment (practice never counts in a grade)")
    elif spec.get("practice") and any(
        isinstance(q, dict) and q.get("kind") == "written" for q in spec.get("questions") or []
    ):
        out.append("a practice set has no written questions (they are graded by hand, not at once)")
    checks = spec.get("checks")
    if checks is not None:
        allowed = checks.get("allowed") if isinstance(checks, dict) else None
        if not isinstance(allowed, int) or isinstance(allowed, bool) or not 0 <= allowed <= 20:
            out.append("checks: allowed is a whole number of checks per answer, 0 to 20")
        elif checks.get("keep", "last") not in ("best", "last"):
            out.append("checks: keep is best or last (which checked answer is graded)")
        elif spec.get("practice"):
            out.append("checks: a practice set is checked without limit; drop checks")
    rubrics = set(rules.RUBRICS) | set(declared)
    seen: set[str] = set()
    for q in questions:
        if not isinstance(q, dict):
            out.append("a question is not a mapping")
            continue
        if q.get("key") in seen:
            out.append(f"{q.get('key')}: the key is used twice")
        seen.add(str(q.get("key")))
        out += question_problems(q, rubrics)
    return out
