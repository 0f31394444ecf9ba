"""Writes for the autograder: answers in, keys and grades computed, results released.

Grading runs and their passes (queueing, chunk completion, what readers see) live in
`apps.autograder.passes`; `grade_students` here is the vectorised core they call per chunk.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
from django.db import transaction
from django.utils import timezone

from apps.autograder import rules, written
from apps.autograder.models import Answer, Instance, Question, QuestionSet
from apps.core import bulk
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Course, Membership, Role, User
from apps.perfcalc.calc import units

# ---------------------------------------------------------------- keys


def _has_draws(q: Question) -> bool:
    return any(isinstance(v, dict) for v in (q.params or {}).values())


def part_size(part: dict[str, Any]) -> float:
    """How big the part's unit is in its dimension's SI base ('ms' → 1e-3; unknown → 1)."""
    return rules.part_size(part)


def _in_part_unit(part: dict[str, Any], spec: Any, params: dict[str, Any]) -> float:
    """A key or bound in the part's unit (apps.autograder.rules.in_part_unit)."""
    return rules.in_part_unit(part, spec, params)


def keys_for(q: Question, params: dict[str, Any]) -> list[float]:
    """One key per part, in the part's unit; a measurement part (no "answer", only bounds) has
    key NaN."""
    return [
        _in_part_unit(p, p["answer"], params) if p.get("answer") not in (None, "") else math.nan
        for p in q.parts
    ]


def _bounds_for(q: Question, params: dict[str, Any]) -> list[float]:
    """The plausibility ceiling of each part ("max", in the part's unit), or inf."""
    return [_in_part_unit(p, p["max"], params) if p.get("max") else math.inf for p in q.parts]


def _floors_for(q: Question, params: dict[str, Any]) -> list[float]:
    """The plausibility floor of each part ("min", in the part's unit), or -inf."""
    return [
        _in_part_unit(p, p["min"], params) if p.get("min") is not None else -math.inf
        for p in q.parts
    ]


def fixed_keys(q: Question) -> list[float]:
    return keys_for(q, dict(q.params or {}))


def instance_for(q: Question, student: User) -> Instance:
    """The student's stored parameters and key for a question with drawn parameters."""
    inst = Instance.objects.filter(question=q, student=student).first()
    if inst is not None:
        return inst
    qs = q.question_set
    seed = rules.seed_for(qs.course.code, qs.key, q.key, str(student.pk))
    params = rules.draw_params(q.params, seed)
    inst, _ = Instance.objects.get_or_create(
        question=q,
        student=student,
        defaults={"seed": seed, "params": params, "keys": keys_for(q, params)},
    )
    return inst


def params_of(q: Question, student: User) -> dict[str, Any]:
    """The parameters a student's question is asked with: their drawn instance's, or the
    question's own when nothing is drawn. Pages and the API read them here."""
    if _has_draws(q):
        return dict(instance_for(q, student).params)
    return dict(q.params or {})


def prompt_of(q: Question, params: dict[str, Any]) -> str:
    """The prompt with the parameters filled in; as written when it cannot be (a bank load
    refuses such a prompt, apps.autograder.banklint; a question stored before that stays
    readable)."""
    try:
        return q.prompt.format(**params)
    except (KeyError, IndexError, ValueError):
        return q.prompt


def preview(q: Question, sample: str = "sample") -> tuple[dict[str, Any], list[float]]:
    """Sample parameters and the key they give, for staff to check a template; stores nothing."""
    qs = q.question_set
    params = (
        rules.draw_params(q.params, rules.seed_for(qs.course.code, qs.key, q.key, sample))
        if _has_draws(q)
        else dict(q.params or {})
    )
    return params, ([] if q.kind == Question.Kind.CHOICE else keys_for(q, params))


class PartPreview(NamedTuple):
    """One part of a question as staff check it: its label and unit, and either its key or,
    for a measurement, the plausible range an answer is credited in (None where unbounded)."""

    label: str
    unit: str
    key: float | None
    floor: float | None
    bound: float | None


def preview_parts(q: Question, params: dict[str, Any], keys: list[float]) -> list[PartPreview]:
    """The parts of `q` with the keys `preview` gave, for a page; a bound that cannot be
    computed is left out rather than shown as a number."""
    parts = list(q.parts or [])
    try:
        floors, bounds = _floors_for(q, params), _bounds_for(q, params)
    except rules.KeyError_:
        floors, bounds = [-math.inf] * len(parts), [math.inf] * len(parts)
    out = []
    for n, part in enumerate(parts):
        key = keys[n] if n < len(keys) and not math.isnan(keys[n]) else None
        floor, bound = floors[n], bounds[n]
        out.append(
            PartPreview(
                label=str(part.get("label") or f"part {n + 1}"),
                unit=str(part.get("unit") or ""),
                key=key,
                floor=None if math.isinf(floor) else floor,
                bound=None if math.isinf(bound) else bound,
            )
        )
    return out


def key_version(question_set: QuestionSet) -> str:
    spec = [
        {
            k: getattr(q, k)
            for k in (
                "key",
                "kind",
                "points",
                "params",
                "parts",
                "rel_tol",
                "abs_tol",
                "partial",
                "rubric",
                "rubric_spec",
            )
        }
        | {"correct": sorted(o["label"] for o in q.options if o.get("correct"))}
        for q in question_set.questions.order_by("position")
    ]
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()


# ---------------------------------------------------------------- answers


def answer_submit(
    *, actor: User, question: Question, answers: dict[int, str], source: str = "form"
) -> list[Answer]:
    """A student's answers to one question (part index → raw text). Refused once the set's
    results are released (the keys are visible then) and after the student's effective
    deadline for the set's assignment, when it has one."""
    qs = question.question_set
    if (
        Membership.objects.filter(
            course=qs.course, user=actor, role=Role.STUDENT, is_active=True
        ).first()
        is None
    ):
        raise NotAllowed("Only students of the course submit answers.")
    n_parts = max(len(question.parts), 1)
    if any(not 0 <= part < n_parts for part in answers):
        raise DomainError(
            f"{question.key} has parts 0–{n_parts - 1}."
            if n_parts > 1
            else f"{question.key} has part 0 only.",
            field="answers",
        )
    if qs.released_at is not None and qs.released_at <= timezone.now():
        raise Conflict("Results and keys of this set are released; answers are closed.")
    if qs.assignment_id:
        from apps.slackdays.selectors import student_deadlines

        d = next(
            (
                d
                for d in student_deadlines(course=qs.course, student=actor)
                if d.assignment.pk == qs.assignment_id
            ),
            None,
        )
        if d is not None and timezone.now() > d.effective:
            raise DomainError("Your deadline for this assignment has passed.")
    if question.kind == Question.Kind.WRITTEN:
        most = written.max_chars_of(question)
        if len((answers.get(0) or "").strip()) > most:
            raise DomainError(
                f"{question.key}: keep the answer under {most:,} characters.", field="answers"
            )
    for part, raw in sorted(answers.items()):
        parsed = _parse(question, part, raw)
        if parsed.status == "unparseable":
            where = f"part {part + 1}: " if n_parts > 1 else ""
            raise DomainError(
                f"{question.key}: {where}{parsed.raw!r}: {parsed.why or 'not a number'}.",
                field="answers",
            )
    return _store(question, actor, answers, source)


def _parse(question: Question, part: int, raw: str | None) -> rules.Parsed:
    if question.kind == Question.Kind.WRITTEN:
        text = (raw or "").strip()
        return rules.Parsed("blank" if not text else "ok", None, text[:500])
    if question.kind == Question.Kind.CHOICE:
        text = (raw or "").strip().lower()
        return rules.Parsed("blank" if not text else "ok", None, text)
    unit = question.parts[part].get("unit", "") if part < len(question.parts) else ""
    return rules.parse_answer(raw, unit)


def answers_bulk_upsert(rows: list[tuple[Question, int, int, str]], source: str) -> int:
    """Store many answers at once: (question, student_id, part, raw), at most one row per
    (question, student, part). Grouped into one column per (question, part) and stored by
    `answers_upsert_columns`."""
    columns: dict[tuple[int, int], tuple[Question, int, list[int], list[str]]] = {}
    for q, student_id, part, raw in rows:
        column = columns.get((q.pk, part))
        if column is None:
            column = columns[(q.pk, part)] = (q, part, [], [])
        column[2].append(student_id)
        column[3].append(raw or "")
    return answers_upsert_columns(list(columns.values()), source)


def answers_upsert_columns(
    columns: list[tuple[Question, int, list[int], list[str]]], source: str
) -> int:
    """Store answers a column at a time: (question, part, student ids, raw texts), the two lists
    of one length, at most one row per (question, student, part) in all. Each distinct text of a
    column is parsed once; the rows stream into the table in one set-based upsert
    (`apps.core.bulk`). Returns the rows given."""
    now = timezone.now()

    def records() -> Iterable[tuple[Any, ...]]:
        for q, part, student_ids, raws in columns:
            q_pk = q.pk
            keep_text = q.kind == Question.Kind.WRITTEN
            parsed = {}
            for text in set(raws):
                p = _parse(q, part, text)
                parsed[text] = (p.raw[:500], p.value, p.status)
            for student_id, text in zip(student_ids, raws, strict=True):
                raw, value, status = parsed[text]
                full = text.strip() if keep_text else ""
                yield (q_pk, student_id, part, raw, full, value, status, source, now)

    with transaction.atomic():  # its own, or a savepoint in the caller's (the intake's)
        return bulk.upsert(
            Answer,
            [
                "question",
                "student",
                "part",
                "raw",
                "text",
                "value",
                "status",
                "source",
                "submitted_at",
            ],
            records(),
            unique=["question", "student", "part"],
            update=["raw", "text", "value", "status", "source", "submitted_at"],
        )


def _store(question: Question, student: User, answers: dict[int, str], source: str) -> list[Answer]:
    out = []
    for part, raw in answers.items():
        p = _parse(question, part, raw)
        a, _ = Answer.objects.update_or_create(
            question=question,
            student=student,
            part=part,
            defaults={
                "raw": p.raw[:500],
                "text": (raw or "").strip() if question.kind == Question.Kind.WRITTEN else "",
                "value": p.value,
                "status": p.status,
                "source": source,
            },
        )
        out.append(a)
    return out


# ---------------------------------------------------------------- grading


def _bands(q: Question) -> list[rules.Band]:
    return [rules.Band(1.0, q.rel_tol, q.abs_tol)] + [
        rules.Band(b["fraction"], b.get("rel", 0.0), b.get("abs", 0.0)) for b in q.partial
    ]


def traps_hit_columns(
    q: Question, values: list[np.ndarray], credits: list[np.ndarray]
) -> list[str] | None:
    """Each student's misconception (or ""), a column per part: the first wrong part whose
    answer is one of its known wrong answers (`parts[i].traps`: [{answer, misconception}],
    matched within the question's tolerance), parts in order and each part's traps in order, a
    matched trap ending the search; a right part, a blank or a non-number matches nothing.
    None when no part of `q` has traps."""
    if not any(part.get("traps") for part in q.parts):
        return None
    n = len(values[0]) if values else 0
    out = np.full(n, "", dtype=object)
    decided = np.zeros(n, dtype=bool)
    for part, value, credit in zip(q.parts, values, credits, strict=False):
        open_ = ~decided & (np.asarray(credit) < 1.0) & np.isfinite(value)
        for trap in part.get("traps", []):
            target = float(trap["answer"])
            tol = max(abs(target) * q.rel_tol, q.abs_tol, 1e-12)
            with np.errstate(invalid="ignore"):
                hit = open_ & (np.abs(value - target) <= tol)
            out[hit] = str(trap.get("misconception", ""))
            decided |= hit
            open_ &= ~hit
    return [str(m) for m in out.tolist()]


class Given(NamedTuple):
    """What grading reads of a stored answer (a tuple, not a model: a chunk reads thousands)."""

    raw: str
    value: float | None
    status: str


def grade_students(question_set: QuestionSet, student_ids: list[int]) -> list[dict[str, Any]]:
    """Pure-ish core: every (student, question) score for these students (3 queries + instances)."""
    questions = list(question_set.questions.order_by("position"))
    answers: dict[tuple[int, int], dict[int, Given]] = defaultdict(dict)
    for q_id, s_id, part, raw, value, status in Answer.objects.filter(
        question__question_set=question_set, student_id__in=student_ids
    ).values_list("question_id", "student_id", "part", "raw", "value", "status"):
        answers[(q_id, s_id)][part] = Given(raw, value, status)
    out: list[dict[str, Any]] = []
    no_answer: dict[int, Given] = {}
    for q in questions:
        if q.kind == Question.Kind.WRITTEN:
            out += written.rows_for(q, student_ids)
            continue
        qid = q.pk  # read once: `q.pk` is a property, and a chunk would read it 100,000 times
        given_of = [answers.get((qid, s), no_answer) for s in student_ids]
        if q.kind == Question.Kind.CHOICE:
            correct = {o["label"].lower() for o in q.options if o.get("correct")}
            chosen = [(ans.raw if (ans := g.get(0)) is not None else "") for g in given_of]
            credit = rules.score_choice(chosen, correct)
            misconceptions = {o["label"].lower(): o.get("misconception", "") for o in q.options}
            labels = sorted(correct)  # one list for every detail: nothing changes it
            for s, c, ch in zip(student_ids, credit.tolist(), chosen, strict=True):
                out.append(
                    {
                        "student_id": s,
                        "question_id": qid,
                        "fraction": float(c),
                        "points": q.points,
                        "detail": {
                            "chosen": ch,
                            "correct": labels,
                            "misconception": "" if c else misconceptions.get(ch, ""),
                        },
                    }
                )
            continue
        if _has_draws(q):
            insts = {
                i.student_id: i
                for i in Instance.objects.filter(question=q, student_id__in=student_ids)
            }
            for s in student_ids:
                if s not in insts:
                    insts[s] = instance_for(q, User(pk=s))
            keys = np.array([insts[s].keys for s in student_ids], dtype=np.float64)
            bounds = np.array(
                [_bounds_for(q, insts[s].params) for s in student_ids], dtype=np.float64
            )
            floors = np.array(
                [_floors_for(q, insts[s].params) for s in student_ids], dtype=np.float64
            )
        else:
            keys = np.tile(np.array(fixed_keys(q), dtype=np.float64), (len(student_ids), 1))
            fixed = dict(q.params or {})
            bounds = np.tile(
                np.array(_bounds_for(q, fixed), dtype=np.float64), (len(student_ids), 1)
            )
            floors = np.tile(
                np.array(_floors_for(q, fixed), dtype=np.float64), (len(student_ids), 1)
            )
        credits, flags, all_vals = [], [], []
        for p in range(len(q.parts)):
            vals = np.array(
                [
                    (
                        got.value
                        if (got := g.get(p)) is not None and got.value is not None
                        else np.nan
                    )
                    for g in given_of
                ],
                dtype=np.float64,
            )
            implausible = (vals > bounds[:, p]) | (vals < floors[:, p])
            if np.isnan(keys[:, p]).all():  # a measurement: credit for a plausible answer
                credit = np.where(~np.isnan(vals) & ~implausible, 1.0, 0.0)
            else:  # never auto-credited outside the physical bounds: staff review it
                credit = np.where(
                    implausible, 0.0, rules.score_numeric(vals, keys[:, p], _bands(q))
                )
            flags.append(implausible)
            credits.append(credit)
            all_vals.append(vals)
        if q.rubric in rules.SECONDARY and len(credits) == 2:
            fraction, rule = rules.score_two_part_rules(
                credits[0],
                credits[1],
                rubric=q.rubric,
                ratio_tol=q.rel_tol,
                unit_slip=bool((q.rubric_spec or {}).get("unit_slip")),
                values=(all_vals[0], all_vals[1]),
                keys=(keys[:, 0], keys[:, 1]),
            )
        else:
            fraction, rule = np.mean(credits, axis=0), np.full(len(student_ids), "")
        # The details are built from plain lists: indexing numpy arrays one element at a time
        # costs a microsecond each, and a chunk reads hundreds of thousands of them.
        n_parts = len(q.parts)
        unit_names = [units.name_of(str(q.parts[p].get("unit", ""))) for p in range(n_parts)]
        key_rows, bound_rows, floor_rows = keys.tolist(), bounds.tolist(), floors.tolist()
        flag_cols = [f.tolist() for f in flags]
        credit_cols = [np.asarray(c, dtype=np.float64).tolist() for c in credits]
        fractions = np.asarray(fraction, dtype=np.float64).tolist()
        rule_names = [str(r) for r in rule]
        secondary_rules = (rules.SECONDARY.get(q.rubric), rules.UNIT_SLIP)
        traps = traps_hit_columns(q, all_vals, credits)
        for i, s in enumerate(student_ids):
            given_parts = given_of[i]
            key_row, bound_row, floor_row = key_rows[i], bound_rows[i], floor_rows[i]
            parts = []
            for p in range(n_parts):
                given = given_parts.get(p)
                key, bound, floor = key_row[p], bound_row[p], floor_row[p]
                parts.append(
                    {
                        "raw": given.raw if given else "",
                        "status": given.status if given else "blank",
                        "key": None if math.isnan(key) else key,
                        "implausible": flag_cols[p][i],
                        "bound": None if math.isinf(bound) else bound,
                        "floor": None if math.isinf(floor) else floor,
                        "unit": unit_names[p],
                        "credit": credit_cols[p][i],
                    }
                )
            detail: dict[str, Any] = {"parts": parts}
            if rule_names[i]:
                detail["rule"] = rule_names[i]
                detail["secondary"] = rule_names[i] in secondary_rules
            trap = traps[i] if traps is not None else ""
            if trap:
                detail["misconception"] = trap
            out.append(
                {
                    "student_id": s,
                    "question_id": qid,
                    "fraction": fractions[i],
                    "points": q.points,
                    "detail": detail,
                }
            )
    return written.with_regrades(question_set, out)


def students_of(course: Course) -> list[int]:
    return list(
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .order_by("user_id")
        .values_list("user_id", flat=True)
    )


def chunks(ids: list[int], size: int) -> Iterable[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def worked_solution(q: Question, params: dict[str, Any]) -> list[list[str]]:
    """Per part, the calculator's worked solution (apps.autograder.rules.worked_steps)."""
    return rules.worked_steps(q.parts, params)


def _raw_value(q: Question, part: int, answers: list[str]) -> float:
    parsed = _parse(q, part, answers[part] if part < len(answers) else "")
    return parsed.value if parsed.value is not None else math.nan


def score_raw(
    questions: list[Question],
    rows: list[dict[str, list[str]]],
    keys_of: dict[str, list[list[float]]] | None = None,
) -> list[dict[str, dict[str, Any]]]:
    """Score answers that belong to no course account (a pre/post quiz keyed by participant ID):
    `rows[i][question.key]` is the list of raw answers per part (one for a choice). The same
    parsing, tolerance bands, two-part rubrics and known wrong answers as `grade_students`; only
    questions with fixed keys (no per-student draws) unless `keys_of[question.key][i]` gives row
    i's keys (a practice variant's). Returns, per row and question: points, fraction, and the
    rule / chosen option / misconception behind them."""
    out: list[dict[str, dict[str, Any]]] = [{} for _ in rows]
    for q in questions:
        if q.kind == Question.Kind.CHOICE:
            correct = {o["label"].lower() for o in q.options if o.get("correct")}
            chosen = [((r.get(q.key) or [""])[0] or "").strip().lower() for r in rows]
            misconceptions = {o["label"].lower(): o.get("misconception", "") for o in q.options}
            for i, (c, ch) in enumerate(
                zip(rules.score_choice(chosen, correct), chosen, strict=True)
            ):
                out[i][q.key] = {
                    "points": float(c) * q.points,
                    "fraction": float(c),
                    "chosen": ch,
                    "misconception": "" if c else misconceptions.get(ch, ""),
                }
            continue
        keys = (
            np.array(keys_of[q.key], dtype=np.float64)
            if keys_of and q.key in keys_of
            else np.tile(np.array(fixed_keys(q), dtype=np.float64), (len(rows), 1))
        )
        values = [
            np.array([_raw_value(q, part, r.get(q.key) or []) for r in rows], dtype=np.float64)
            for part in range(len(q.parts))
        ]
        credits = [
            rules.score_numeric(values[p], keys[:, p], _bands(q)) for p in range(len(q.parts))
        ]
        if q.rubric in rules.SECONDARY and len(credits) == 2:
            fraction, rule = rules.score_two_part_rules(
                credits[0],
                credits[1],
                rubric=q.rubric,
                ratio_tol=q.rel_tol,
                unit_slip=bool((q.rubric_spec or {}).get("unit_slip")),
                values=(values[0], values[1]),
                keys=(keys[:, 0], keys[:, 1]),
            )
        else:
            fraction, rule = np.mean(credits, axis=0), np.full(len(rows), "")
        traps = traps_hit_columns(q, values, credits)
        for i in range(len(rows)):
            out[i][q.key] = {
                "points": float(fraction[i]) * q.points,
                "fraction": float(fraction[i]),
                "rule": str(rule[i]),
                "secondary": str(rule[i]) in (rules.SECONDARY.get(q.rubric), rules.UNIT_SLIP),
                "misconception": traps[i] if traps is not None else "",
            }
    return out
