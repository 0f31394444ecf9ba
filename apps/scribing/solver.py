"""Who scribes which lecture, solved exactly with OR-Tools CP-SAT. Pure Python: no Django.

Hard rules: every student gets exactly `per_student` eligible lectures; lecture loads differ by
at most one (each lecture takes ⌊total/L⌋ or ⌈total/L⌉ scribes, or exactly what staff set); a
student's lectures are at least `min_gap_days` apart; nobody gets a lecture they cannot take;
members of a group that asked to be spread never share a lecture; duties already published stay.
Objective: the weighted number of satisfied preferences (rank 1 of N is worth N, rank N worth 1),
then, a tenth as much, fewer distinct lectures for groups that asked to be together.

Determinism: one search worker, the seed, and a *deterministic* time budget
(`max_deterministic_time`), so the same inputs and seed give the same assignment on any machine.
When no assignment exists the reason is found in words: first by counting (a student with too
few lectures, a lecture with too few available students), then from CP-SAT's infeasible core
over the per-student and per-lecture constraints.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


@dataclass(frozen=True)
class Lec:
    id: int
    label: str  # "lecture 14"
    day: dt.date
    needed: int | None = None  # None: balanced automatically


@dataclass(frozen=True)
class Stu:
    id: int
    label: str  # name or e-mail, for messages
    group: int | None = None


@dataclass
class Problem:
    students: Sequence[Stu]
    lectures: Sequence[Lec]
    per_student: int = 2
    min_gap_days: int = 7
    cannot: set[tuple[int, int]] = field(default_factory=set)  # (student, lecture)
    prefer: dict[tuple[int, int], int] = field(
        default_factory=dict
    )  # (student, lecture) → rank 1..N
    max_rank: int = 3
    spread: set[int] = field(default_factory=set)  # group ids
    together: set[int] = field(default_factory=set)
    fixed: set[tuple[int, int]] = field(default_factory=set)  # (student, lecture) kept as published
    seed: int = 0
    deterministic_seconds: float = 20.0


@dataclass
class Solution:
    ok: bool
    pairs: list[tuple[int, int]]  # (student, lecture)
    score: int  # weighted satisfied preferences
    best_bound: float
    optimal: bool
    reasons: list[str]
    satisfied: dict[int, int]  # rank → how many satisfied
    wall_seconds: float

    @property
    def gap(self) -> float:
        """Relative optimality gap (0 when proven optimal)."""
        if self.optimal or not self.best_bound:
            return 0.0
        return max(0.0, (self.best_bound - self.score) / self.best_bound)


def weight(rank: int, max_rank: int) -> int:
    return max(max_rank + 1 - rank, 1)


def loads(total: int, lectures: Sequence[Lec]) -> dict[int, tuple[int, int]]:
    """Allowed (min, max) load per lecture: what staff set, or the balanced ⌊total/L⌋..⌈total/L⌉."""
    auto = [lec for lec in lectures if lec.needed is None]
    fixed_sum = sum(lec.needed or 0 for lec in lectures if lec.needed is not None)
    rest = max(total - fixed_sum, 0)
    lo = rest // len(auto) if auto else 0
    hi = lo + (1 if auto and rest % len(auto) else 0)
    return {
        lec.id: ((lec.needed, lec.needed) if lec.needed is not None else (lo, hi))
        for lec in lectures
    }


def _available(p: Problem) -> dict[int, list[Lec]]:
    return {s.id: [lec for lec in p.lectures if (s.id, lec.id) not in p.cannot] for s in p.students}


def _max_spaced(days: Iterable[dt.date], gap: int) -> int:
    """Most lectures one student could take from these days, at least `gap` days apart (greedy
    earliest-first is optimal for this interval-spacing problem)."""
    count, last = 0, None
    for d in sorted(days):
        if last is None or (d - last).days >= gap:
            count, last = count + 1, d
    return count


def precheck(p: Problem) -> list[str]:
    """Reasons found by counting, each in words a TA understands; [] when none."""
    reasons: list[str] = []
    if not p.lectures:
        return ["no lecture is eligible for scribing"]
    if not p.students:
        return []
    total = len(p.students) * p.per_student
    bounds = loads_for(p)
    cap = sum(hi for _, hi in bounds.values())
    floor = sum(lo for lo, _ in bounds.values())
    if cap < total:
        reasons.append(
            f"the lectures' loads add up to {cap} places but {len(p.students)} students × "
            f"{p.per_student} need {total}"
        )
    if floor > total:
        reasons.append(
            f"the lectures need {floor} scribes in all but {len(p.students)} students × "
            f"{p.per_student} give only {total}"
        )
    avail = _available(p)
    for s in p.students:
        lecs = avail[s.id]
        if len(lecs) < p.per_student:
            only = ", ".join(lec.label for lec in lecs)
            reasons.append(
                f"{s.label} can take only {only}"
                if lecs
                else f"{s.label} can take no eligible lecture"
            )
        elif _max_spaced((lec.day for lec in lecs), p.min_gap_days) < p.per_student:
            reasons.append(
                f"{s.label}'s available lectures ({', '.join(lec.label for lec in lecs)}) are "
                f"not {p.min_gap_days} days apart"
            )
    by_lecture: dict[int, int] = defaultdict(int)
    for s in p.students:
        for lec in avail[s.id]:
            by_lecture[lec.id] += 1
    for lec in p.lectures:
        need = bounds[lec.id][0]
        if by_lecture[lec.id] < need:
            reasons.append(
                f"{lec.label} has {by_lecture[lec.id]} available student"
                f"{'' if by_lecture[lec.id] == 1 else 's'} but needs {need}"
            )
    for s_id, l_id in p.fixed:
        if (s_id, l_id) in p.cannot:
            label = next((s.label for s in p.students if s.id == s_id), str(s_id))
            lec_label = next((lec.label for lec in p.lectures if lec.id == l_id), str(l_id))
            reasons.append(
                f"{label} is published on {lec_label} but has since marked it as impossible"
            )
    return reasons


def _build(
    p: Problem, *, assumptions: bool
) -> tuple[cp_model.CpModel, dict[tuple[int, int], cp_model.IntVar], dict[int, str]]:
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    model = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for s in p.students:
        for lec in p.lectures:
            if (s.id, lec.id) not in p.cannot:
                x[s.id, lec.id] = model.new_bool_var(f"x_{s.id}_{lec.id}")
    names: dict[int, str] = {}

    def guarded(constraint: cp_model.Constraint, why: str) -> None:
        if assumptions:
            lit = model.new_bool_var(why)
            constraint.only_enforce_if(lit)
            names[lit.index] = why

    bounds = loads_for(p)
    for s in p.students:
        mine = [x[s.id, lec.id] for lec in p.lectures if (s.id, lec.id) in x]
        guarded(model.add(sum(mine) == p.per_student), f"{s.label} scribes exactly {p.per_student}")
    for lec in p.lectures:
        col = [x[s.id, lec.id] for s in p.students if (s.id, lec.id) in x]
        lo, hi = bounds[lec.id]
        word = f"{lo}" if lo == hi else f"{lo} or {hi}"
        guarded(model.add_linear_constraint(sum(col), lo, hi), f"{lec.label} takes {word} scribes")
    days = sorted(p.lectures, key=lambda lec: (lec.day, lec.id))
    for s in p.students:
        for i, first in enumerate(days):
            window = [
                x[s.id, lec.id]
                for lec in days[i:]
                if (lec.day - first.day).days < p.min_gap_days and (s.id, lec.id) in x
            ]
            if len(window) > 1:
                model.add(sum(window) <= 1)
    groups: dict[int, list[int]] = defaultdict(list)
    for s in p.students:
        if s.group is not None:
            groups[s.group].append(s.id)
    for g in p.spread:
        for lec in p.lectures:
            col = [x[s, lec.id] for s in groups.get(g, []) if (s, lec.id) in x]
            if len(col) > 1:
                model.add(sum(col) <= 1)
    for pair in p.fixed:
        if pair in x:
            model.add(x[pair] == 1)
    terms = [
        10 * weight(rank, p.max_rank) * x[pair] for pair, rank in p.prefer.items() if pair in x
    ]
    for g in p.together:
        members = groups.get(g, [])
        if len(members) < 2:
            continue
        for lec in p.lectures:
            col = [x[s, lec.id] for s in members if (s, lec.id) in x]
            if col:
                used = model.new_bool_var(f"g{g}_{lec.id}")
                for v in col:
                    model.add_implication(v, used)
                terms.append(-1 * used)
    if terms:
        model.maximize(sum(terms))
    return model, x, names


def _solver(p: Problem) -> cp_model.CpSolver:
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = p.seed
    solver.parameters.max_deterministic_time = p.deterministic_seconds
    return solver


def solve(p: Problem) -> Solution:
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    reasons = precheck(p)
    if reasons:
        return Solution(False, [], 0, 0.0, False, reasons, {}, 0.0)
    if not p.students:
        return Solution(True, [], 0, 0.0, True, [], {}, 0.0)
    model, x, _ = _build(p, assumptions=False)
    solver = _solver(p)
    # The full LP relaxation in the search: at 2,000 students × 26 lectures the proven gap fell
    # from 3.5 % to 0.1 % in the same time (bench/bench_scribing.py); still one worker, repeatable.
    solver.parameters.linearization_level = 2
    status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        pairs = sorted(pair for pair, v in x.items() if solver.boolean_value(v))
        satisfied: dict[int, int] = defaultdict(int)
        score = 0
        for pair in pairs:
            if pair in p.prefer:
                satisfied[p.prefer[pair]] += 1
                score += weight(p.prefer[pair], p.max_rank)
        bound = solver.best_objective_bound / 10 if p.prefer else 0.0
        return Solution(
            True,
            pairs,
            score,
            max(bound, float(score)),
            status == cp_model.OPTIMAL,
            [],
            dict(satisfied),
            solver.wall_time,
        )
    if status == cp_model.INFEASIBLE:
        return Solution(False, [], 0, 0.0, False, explain(p), {}, solver.wall_time)
    return Solution(
        False,
        [],
        0,
        0.0,
        False,
        [
            "no assignment was found within the time limit: raise the limit or "
            "relax a rule (fewer impossible lectures, a shorter gap)"
        ],
        {},
        solver.wall_time,
    )


def explain(p: Problem) -> list[str]:
    """Which per-student and per-lecture rules cannot all hold together (CP-SAT's infeasible core
    over those rules, with spacing, conflicts and group spreads always enforced)."""
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    model, _, names = _build(p, assumptions=True)
    model.add_assumptions([model.get_bool_var_from_proto_index(i) for i in names])
    model.clear_objective()
    solver = _solver(p)
    status = solver.solve(model)
    if status != cp_model.INFEASIBLE:  # pragma: no cover - the solve above said it was
        return ["no assignment exists, but the reason could not be narrowed down"]
    core = [names[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in names]
    rules = f"at least {p.min_gap_days} days apart, no impossible lecture"
    if p.spread:
        rules += ", spread groups on different lectures"
    if not core:
        return [f"the spacing and conflict rules ({rules}) leave no assignment"]
    shown = "; ".join(core[:8]) + (f"; and {len(core) - 8} more" if len(core) > 8 else "")
    return [f"these rules cannot all hold ({rules}): {shown}"]


def violations(
    p: Problem,
    pairs: Sequence[tuple[int, int]],
    *,
    only_students: set[int] | None = None,
    check_loads: bool = True,
) -> list[str]:
    """Every hard rule an assignment breaks, in words (empty when it holds). `only_students`
    limits the per-student rules to those students (a swap touches two)."""
    out: list[str] = []
    lec_by = {lec.id: lec for lec in p.lectures}
    stu_by = {s.id: s for s in p.students}
    mine: dict[int, list[Lec]] = defaultdict(list)
    col: dict[int, list[int]] = defaultdict(list)
    for s_id, l_id in pairs:
        lec = lec_by.get(l_id)
        if lec is None:
            out.append(f"lecture id {l_id} does not take scribes")
            continue
        mine[s_id].append(lec)
        col[l_id].append(s_id)
    check = only_students if only_students is not None else set(stu_by)
    for s_id in sorted(check):
        s = stu_by.get(s_id)
        label = s.label if s else f"student {s_id}"
        lecs = sorted(mine.get(s_id, []), key=lambda lec: lec.day)
        if len(lecs) != p.per_student:
            out.append(
                f"{label} scribes {len(lecs)} lecture{'' if len(lecs) == 1 else 's'}, not "
                f"{p.per_student}"
            )
        if len({lec.id for lec in lecs}) != len(lecs):
            out.append(f"{label} is on the same lecture twice")
        for a, b in itertools.pairwise(lecs):
            if (b.day - a.day).days < p.min_gap_days:
                out.append(
                    f"{label}'s {a.label} and {b.label} are {(b.day - a.day).days} days apart "
                    f"(at least {p.min_gap_days})"
                )
        out.extend(f"{label} cannot take {lec.label}" for lec in lecs if (s_id, lec.id) in p.cannot)
    if check_loads:
        bounds = loads_for(p)
        for lec in p.lectures:
            lo, hi = bounds[lec.id]
            n = len(col.get(lec.id, []))
            if not lo <= n <= hi:
                want = f"{lo}" if lo == hi else f"{lo}–{hi}"
                out.append(f"{lec.label} has {n} scribe{'' if n == 1 else 's'}, needs {want}")
    groups: dict[int, int] = {s.id: s.group for s in p.students if s.group is not None}
    for l_id, who in col.items():
        seen: dict[int, int] = {}
        for s_id in who:
            g = groups.get(s_id)
            if g in p.spread:
                if g in seen and (only_students is None or s_id in check or seen[g] in check):
                    out.append(f"two members of a spread group are on {lec_by[l_id].label}")
                seen[g] = s_id
    return out


def loads_for(p: Problem) -> dict[int, tuple[int, int]]:
    """The balanced (or staff-set) loads, widened where published duties already sit: a student
    who dropped leaves their lectures short, and re-solving never moves a published duty."""
    bounds = loads(len(p.students) * p.per_student, p.lectures)
    if not p.fixed:
        return bounds
    fixed = Counter(lid for _, lid in p.fixed)
    return {
        lid: (min(lo, fixed[lid]) if fixed[lid] else lo, max(hi, fixed[lid]))
        for lid, (lo, hi) in bounds.items()
    }
