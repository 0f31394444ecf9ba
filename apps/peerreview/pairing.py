"""Who reviews whom: each included group reviews exactly k others and is reviewed by exactly k,
never itself, no reciprocal pair when there are 3 or more groups, no avoided pair; pairs that
shared a node-sharing window are avoided when possible. Pure Python: no Django.

Fast path: a seeded random cyclic order in which each group reviews the next k (a circulant:
exact degrees, no self, no 2-cycles while 2k < n), re-drawn until no avoided pair is used and as
few window pairs as possible remain. When that fails (dense avoid lists), an exact CP-SAT model
over the allowed pairs either finds a pairing or proves none exists; the reason is named.
`repair` re-pairs after a group is excluded, keeping as many published pairs as the rules allow.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

Pair = tuple[int, int]  # (reviewer, reviewee)


@dataclass
class PairingProblem:
    groups: Sequence[int]
    k: int = 1
    avoid: set[frozenset[int]] = field(default_factory=set)  # unordered pairs never to use
    prefer_not: set[frozenset[int]] = field(
        default_factory=set
    )  # shared a window, or met in an earlier round: avoid if possible
    seed: int = 0
    names: dict[int, str] = field(default_factory=dict)

    def name(self, g: int) -> str:
        return self.names.get(g, f"group {g}")


@dataclass
class Pairing:
    ok: bool
    pairs: list[Pair]
    reasons: list[str]
    soft_violations: int = 0  # pairs in `prefer_not` (used only when unavoidable)
    method: str = ""


def _allowed(p: PairingProblem, a: int, b: int) -> bool:
    return a != b and frozenset((a, b)) not in p.avoid


def check(p: PairingProblem, pairs: Iterable[Pair]) -> list[str]:
    """Every rule a pairing breaks, in words; [] when it holds."""
    pairs = list(pairs)
    out: list[str] = []
    n = len(p.groups)
    outs = dict.fromkeys(p.groups, 0)
    ins = dict.fromkeys(p.groups, 0)
    seen = set(pairs)
    if len(seen) != len(pairs):
        out.append("a pair appears twice")
    for a, b in pairs:
        if a not in outs or b not in ins:
            out.append(f"{p.name(a)} → {p.name(b)} involves a group that is not in the round")
            continue
        outs[a] += 1
        ins[b] += 1
        if a == b:
            out.append(f"{p.name(a)} reviews itself")
        elif frozenset((a, b)) in p.avoid:
            out.append(f"{p.name(a)} and {p.name(b)} must not review each other")
        if n >= 3 and a < b and (b, a) in seen:
            out.append(f"{p.name(a)} and {p.name(b)} review each other")
    out += [
        f"{p.name(g)} reviews {c} group{'' if c == 1 else 's'}, not {p.k}"
        for g, c in outs.items()
        if c != p.k
    ]
    out += [
        f"{p.name(g)} is reviewed by {c} group{'' if c == 1 else 's'}, not {p.k}"
        for g, c in ins.items()
        if c != p.k
    ]
    return out


def precheck(p: PairingProblem) -> list[str]:
    n, k = len(p.groups), p.k
    if n < 2:
        return ["at least 2 groups are needed for a round"]
    if k > n - 1:
        return [f"with {n} groups each can review at most {n - 1} others, not {k}"]
    if n >= 3 and 2 * k > n - 1:
        return [
            f"with {n} groups, reviewing {k} each forces two groups to review each other "
            f"(k can be at most {(n - 1) // 2})"
        ]
    reasons = []
    for g in p.groups:
        options = sum(1 for h in p.groups if _allowed(p, g, h))
        if options < k:
            reasons.append(
                f"{p.name(g)} may review only {options} group{'' if options == 1 else 's'} "
                f"(the others are avoided) but must review {k}"
            )
    return reasons


def _circulant(order: list[int], k: int) -> list[Pair]:
    n = len(order)
    return [(order[i], order[(i + s) % n]) for i in range(n) for s in range(1, k + 1)]


def pair(p: PairingProblem, *, tries: int = 200) -> Pairing:
    reasons = precheck(p)
    if reasons:
        return Pairing(False, [], reasons)
    n = len(p.groups)
    rng = random.Random(p.seed)  # noqa: S311 - a reproducible shuffle, not a secret
    best: tuple[int, list[Pair]] | None = None
    if n >= 3 or p.k == 1:
        for _ in range(tries):
            order = list(p.groups)
            rng.shuffle(order)
            pairs = _circulant(order, p.k)
            if any(frozenset(x) in p.avoid for x in pairs):
                continue
            soft = sum(1 for x in pairs if frozenset(x) in p.prefer_not)
            if best is None or soft < best[0]:
                best = (soft, pairs)
            if soft == 0:
                break
        if best is not None and best[0] == 0:
            return Pairing(True, sorted(best[1]), [], 0, "random cyclic order")
    exact = _exact(p, keep=set())
    if exact.ok or best is None:
        return exact
    return Pairing(True, sorted(best[1]), [], best[0], "random cyclic order")


def repair(p: PairingProblem, published: Iterable[Pair]) -> Pairing:
    """A pairing of `p.groups` keeping as many of the published pairs as possible."""
    reasons = precheck(p)
    if reasons:
        return Pairing(False, [], reasons)
    return _exact(p, keep={x for x in published if x[0] in p.groups and x[1] in p.groups})


def _exact(p: PairingProblem, *, keep: set[Pair]) -> Pairing:
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    model = cp_model.CpModel()
    rng = random.Random(p.seed)  # noqa: S311 - tie-breaking, not a secret
    x = {
        (a, b): model.new_bool_var(f"x{a}_{b}")
        for a in p.groups
        for b in p.groups
        if _allowed(p, a, b)
    }
    lits: dict[int, str] = {}
    for g in p.groups:
        outs = [v for (a, _), v in x.items() if a == g]
        ins = [v for (_, b), v in x.items() if b == g]
        for terms, why in (
            (outs, f"{p.name(g)} reviews {p.k}"),
            (ins, f"{p.name(g)} is reviewed by {p.k}"),
        ):
            lit = model.new_bool_var(why)
            model.add(sum(terms) == p.k).only_enforce_if(lit)
            lits[lit.index] = why
    if len(p.groups) >= 3:
        for (a, b), v in x.items():
            if a < b and (b, a) in x:
                model.add(v + x[b, a] <= 1)
    model.add_assumptions([model.get_bool_var_from_proto_index(i) for i in lits])
    kept = [v for pr, v in x.items() if pr in keep]
    soft = [v for pr, v in x.items() if frozenset(pr) in p.prefer_not]
    noise = [rng.randint(0, 3) * v for v in x.values()]  # the seed picks among equal pairings
    model.maximize(1000 * sum(kept) - 100 * sum(soft) + sum(noise))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = p.seed
    solver.parameters.max_deterministic_time = 10.0
    status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        pairs = sorted(pr for pr, v in x.items() if solver.boolean_value(v))
        return Pairing(
            True,
            pairs,
            [],
            sum(1 for pr in pairs if frozenset(pr) in p.prefer_not),
            "exact (CP-SAT)",
        )
    if status == cp_model.INFEASIBLE:
        core = [lits[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in lits]
        shown = "; ".join(core[:8]) + (f"; and {len(core) - 8} more" if len(core) > 8 else "")
        return Pairing(
            False,
            [],
            [f"the avoided pairs leave no pairing: these cannot all hold together: {shown}"],
        )
    return Pairing(False, [], ["no pairing was found in time; remove some avoided pairs"])
