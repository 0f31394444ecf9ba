"""Suggested project groups from teammate wishes and shared interests (pure: no Django).

The method, in the order it decides things:
1. People who must stay together form *units*: the members of an existing group, and every
   *mutual* pair of teammate wishes (A names B and B names A), joined while the unit stays within
   the maximum group size. Pairs are joined in a seeded order, so a clique larger than a group
   keeps as many of its mutual pairs as fit, reproducibly. If those units leave sizes that do not
   split (13 people in units of 5 and 5 cannot make 4 + 4 + 5), only existing groups stay units
   and mutual pairs are weighed like the rest.
2. An exact CP-SAT model puts units into groups: every unit in exactly one group, every group
   used has between the minimum and the maximum members (unused groups are empty). It maximises
   the pairs placed together, weighted: a mutual wish that could not be made a unit 50, a
   one-sided wish 10, and one point per shared research interest (for each person's five
   most similar others, so the model stays small).
3. A pool larger than `BLOCK` people (a whole course of 2,000) is first cut into blocks of about
   `BLOCK` people that keep units whole and keep together the units joined by the most weight
   (each block grown from one unit by the heaviest ties to it), and each block is placed
   exactly as below; wishes across blocks are lost, which the stats then show. A progress
   callback hears each block as it is done.
4. One search worker, the seed and a deterministic time budget make the same input give the same
   groups on any machine. A large pool that finds nothing within the budget searches again from
   a greedy feasible start (units largest first into the emptiest group), which is the answer if
   time runs out again: a valid split is never reported as impossible. No partition possible
   (too few people, or sizes that do not split, e.g. 7 people into groups of 4–6) is said in words.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

MUTUAL, ONE_SIDED, TOP_K = 50, 10, 5
BLOCK = 200  # people placed by one exact model; a larger pool is cut into blocks of this size
Progress = Callable[[int, int], None]  # (blocks done, blocks in all)


@dataclass(frozen=True)
class MatchingProblem:
    people: Sequence[int]
    wishes: Mapping[int, frozenset[int]] = field(default_factory=dict)  # who each person names
    interests: Mapping[int, frozenset[str]] = field(default_factory=dict)
    together: Sequence[frozenset[int]] = ()  # already in a group together
    min_size: int = 4
    max_size: int = 6
    seed: int = 0
    deterministic_seconds: float = 1.5


@dataclass
class MatchingResult:
    groups: list[list[int]]
    ok: bool
    reason: str = ""
    mutual_pairs: int = 0  # mutual wish pairs among the people
    mutual_kept: int = 0
    mutual_possible: int = 0  # pairs whose wish could be honoured at all (unit within max size)
    one_sided_kept: int = 0
    shared_interests: int = 0
    optimal: bool = False
    # False when keeping every joinable mutual pair together left sizes that do not split, so
    # mutual pairs were weighed (50 each) instead of kept as units
    mutual_units_split: bool = True


def mutual_pairs(p: MatchingProblem) -> list[tuple[int, int]]:
    members = set(p.people)
    return sorted(
        {
            (min(a, b), max(a, b))
            for a in p.people
            for b in p.wishes.get(a, frozenset())
            if b in members and b != a and a in p.wishes.get(b, frozenset())
        }
    )


def _units(p: MatchingProblem, *, mutual: bool = True) -> tuple[list[list[int]], int]:
    """Units (lists of people kept together: existing groups, and with `mutual` the mutual
    pairs) and how many mutual pairs could be joined."""
    parent = {x: x for x in p.people}
    size = dict.fromkeys(p.people, 1)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: int, b: int) -> bool:
        ra, rb = find(a), find(b)
        if ra == rb:
            return True
        if size[ra] + size[rb] > p.max_size:
            return False
        parent[rb] = ra
        size[ra] += size[rb]
        return True

    for group in p.together:
        ids = [x for x in group if x in parent]
        for x in ids[1:]:
            join(ids[0], x)
    pairs = mutual_pairs(p) if mutual else []
    random.Random(p.seed).shuffle(pairs)  # noqa: S311 - a reproducible order, not a secret
    possible = sum(1 for a, b in pairs if join(a, b))
    units: dict[int, list[int]] = {}
    for x in sorted(p.people):
        units.setdefault(find(x), []).append(x)
    return sorted(units.values()), possible


def _weights(p: MatchingProblem) -> dict[tuple[int, int], int]:
    members = set(p.people)
    w: dict[tuple[int, int], int] = {}
    for a in p.people:
        for b in p.wishes.get(a, frozenset()):
            if b in members and b != a:
                key = (min(a, b), max(a, b))
                w[key] = (
                    MUTUAL if a in p.wishes.get(b, frozenset()) else max(w.get(key, 0), ONE_SIDED)
                )
    for a in p.people:
        mine = p.interests.get(a, frozenset())
        if not mine:
            continue
        scored = sorted(
            ((len(mine & p.interests.get(b, frozenset())), b) for b in p.people if b != a),
            reverse=True,
        )
        for shared, b in scored[:TOP_K]:
            if shared:
                key = (min(a, b), max(a, b))
                w[key] = w.get(key, 0) + shared
    return w


def _greedy(units: list[list[int]], lo: int, hi: int, max_groups: int) -> list[int] | None:
    """A feasible placement to start from, or None: as few groups as the maximum size allows,
    units largest first, each into the emptiest group it fits (unit 0 into group 0, as the
    model's symmetry rule wants)."""
    n = sum(len(u) for u in units)
    count = -(-n // hi)
    if count * lo > n or count > max_groups:
        return None
    sizes = [0] * count
    where = [0] * len(units)
    order = [0, *sorted(range(1, len(units)), key=lambda u: -len(units[u]))]
    for u in order:
        fits = [g for g in range(count) if sizes[g] + len(units[u]) <= hi]
        if not fits:
            return None
        g = 0 if u == 0 else min(fits, key=lambda g: (sizes[g], g))
        where[u] = g
        sizes[g] += len(units[u])
    return where if min(sizes) >= lo else None


def _blocks(
    units: list[list[int]], weights: Mapping[tuple[int, int], int], size: int
) -> list[list[int]]:
    """Unit indexes cut into blocks of at least `size` people (the last block takes a short
    remainder): each block starts from the first unit left and grows by the unit with the most
    weight to the block so far (ties: the lower index), else the next unit left."""
    unit_of = {x: i for i, u in enumerate(units) for x in u}
    ties: dict[int, dict[int, int]] = {i: {} for i in range(len(units))}
    for (a, b), w in weights.items():
        ua, ub = unit_of[a], unit_of[b]
        if ua != ub:
            ties[ua][ub] = ties[ua].get(ub, 0) + w
            ties[ub][ua] = ties[ub].get(ua, 0) + w
    left = set(range(len(units)))
    order = iter(range(len(units)))
    blocks: list[list[int]] = []
    while left:
        block: list[int] = []
        people = 0
        gain: dict[int, int] = {}
        heap: list[tuple[int, int]] = []
        while left and people < size:
            u = -1
            while heap:
                g, cand = heapq.heappop(heap)
                if cand in left and gain.get(cand) == -g:
                    u = cand
                    break
            if u < 0:
                u = next(i for i in order if i in left)
            left.discard(u)
            block.append(u)
            people += len(units[u])
            for v, w in ties[u].items():
                if v in left:
                    gain[v] = gain.get(v, 0) + w
                    heapq.heappush(heap, (-gain[v], v))
        blocks.append(block)
    if len(blocks) > 1 and sum(len(units[u]) for u in blocks[-1]) < size // 2:
        tail = blocks.pop()
        blocks[-1] += tail
    return blocks


def _place_blocks(
    p: MatchingProblem, units: list[list[int]], progress: Progress | None
) -> tuple[cp_model.CpSolverStatus, list[list[int]] | None, bool]:
    """`_place` for a pool of any size: one exact model per block of about `BLOCK` people. A
    block that does not split on its own is joined to the next one."""
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    if len(p.people) <= BLOCK:
        out = _place(p, units)
        if progress is not None:
            progress(1, 1)
        return out
    blocks = _blocks(units, _weights(p), BLOCK)
    groups: list[list[int]] = []
    optimal = True
    carry: list[int] = []
    for i, block in enumerate(blocks):
        mine = carry + block
        sub_units = [units[u] for u in mine]
        sub = MatchingProblem(
            people=[x for u in sub_units for x in u],
            wishes=p.wishes,
            interests=p.interests,
            together=(),
            min_size=p.min_size,
            max_size=p.max_size,
            seed=p.seed,
            deterministic_seconds=p.deterministic_seconds,
        )
        status, found, proven = _place(sub, sorted(sub_units))
        if found is None:
            if i + 1 < len(blocks):  # sizes that do not split here: try it with the next block
                carry = mine
                continue
            return status, None, False
        carry = []
        groups += [g for g in found if g]
        optimal = optimal and proven
        if progress is not None:
            progress(i + 1, len(blocks))
    return cp_model.FEASIBLE, groups, False if len(blocks) > 1 else optimal


def _place(
    p: MatchingProblem, units: list[list[int]]
) -> tuple[cp_model.CpSolverStatus, list[list[int]] | None, bool]:
    """(CP-SAT status, groups or None, proven optimal) for placing these units into groups."""
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    n, lo, hi = len(p.people), p.min_size, p.max_size
    unit_of = {x: i for i, u in enumerate(units) for x in u}
    n_groups = n // lo
    model = cp_model.CpModel()
    x = {
        (u, g): model.new_bool_var(f"x{u}_{g}") for u in range(len(units)) for g in range(n_groups)
    }
    used = [model.new_bool_var(f"used{g}") for g in range(n_groups)]
    for u in range(len(units)):
        model.add_exactly_one(x[u, g] for g in range(n_groups))
    for g in range(n_groups):
        members = sum(len(units[u]) * x[u, g] for u in range(len(units)))
        model.add(members >= lo * used[g])
        model.add(members <= hi * used[g])
        if g:
            model.add(used[g] <= used[g - 1])  # symmetry: fill groups in order
    model.add(x[0, 0] == 1)
    objective = []
    for (a, b), weight in _weights(p).items():
        ua, ub = unit_of[a], unit_of[b]
        if ua == ub:
            continue
        for g in range(n_groups):
            same = model.new_bool_var("")
            model.add_implication(same, x[ua, g])
            model.add_implication(same, x[ub, g])
            objective.append(weight * same)
    if objective:
        model.maximize(sum(objective))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = p.seed
    solver.parameters.max_deterministic_time = p.deterministic_seconds
    status = solver.solve(model)
    start = _greedy(units, lo, hi, n_groups)
    if status == cp_model.UNKNOWN and start is not None:
        # A large pool: no placement found in the budget. Search again from a feasible start
        # (given as a hint only now: on small pools it slows the search down).
        for u, g0 in enumerate(start):
            for g in range(n_groups):
                model.add_hint(x[u, g], g == g0)
        for g in range(n_groups):
            model.add_hint(used[g], g <= max(start))
        status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return (
            status,
            [
                sorted(x_ for u in range(len(units)) if solver.value(x[u, g]) for x_ in units[u])
                for g in range(n_groups)
            ],
            status == cp_model.OPTIMAL,
        )
    if start is not None:  # out of time before the first improvement: the start is still valid
        return (
            status,
            [
                sorted(x_ for u in range(len(units)) if start[u] == g for x_ in units[u])
                for g in range(n_groups)
            ],
            False,
        )
    return status, None, False


def suggest(p: MatchingProblem, progress: Progress | None = None) -> MatchingResult:
    from ortools.sat.python import cp_model  # loaded when used: ortools takes ~1 s to import

    n = len(p.people)
    lo, hi = p.min_size, p.max_size
    if n == 0:
        return MatchingResult([], True, "Nobody is waiting for a group.")
    if n < lo:
        return MatchingResult(
            [],
            False,
            f"{n} {'person is' if n == 1 else 'people are'} too few for a group of at least {lo}.",
        )
    units, possible = _units(p)
    pairs = mutual_pairs(p)
    status, groups, optimal = _place_blocks(p, units, progress)
    sizes_split_units = True
    if status == cp_model.INFEASIBLE and possible:
        # The mutual units themselves do not split (13 people in units of 5 and 5 cannot make
        # 4 + 4 + 5): keep only existing groups whole and let the objective keep mutual pairs.
        sizes_split_units = False
        units, possible = _units(p, mutual=False)
        status, groups, optimal = _place_blocks(p, units, progress)
    if groups is None and status == cp_model.INFEASIBLE:
        big = [u for u in units if len(u) > 1]
        kept = f", keeping {len(big)} set(s) of people together" if big else ""
        return MatchingResult(
            [],
            False,
            f"{n} people cannot be split into groups of {lo}–{hi}{kept} "
            f"(for example 7 is more than one group and less than two).",
        )
    if groups is None:
        return MatchingResult(
            [],
            False,
            f"No split of {n} people into groups of {lo}–{hi} was found in the time "
            "allowed; try again with another seed or fewer people.",
        )
    groups = sorted((g for g in groups if g), key=lambda g: g[0])
    where = {x_: i for i, g in enumerate(groups) for x_ in g}
    everyone = set(p.people)
    one_sided = {
        (a, b)
        for a in p.people
        for b in p.wishes.get(a, frozenset())
        if b in everyone and a not in p.wishes.get(b, frozenset())
    }
    shared = sum(
        len(p.interests.get(a, frozenset()) & p.interests.get(b, frozenset()))
        for g in groups
        for i, a in enumerate(g)
        for b in g[i + 1 :]
    )
    return MatchingResult(
        groups,
        True,
        "",
        mutual_pairs=len(pairs),
        mutual_kept=sum(1 for a, b in pairs if where[a] == where[b]),
        mutual_possible=possible,
        one_sided_kept=sum(1 for a, b in one_sided if where[a] == where[b]),
        shared_interests=shared,
        optimal=optimal,
        mutual_units_split=sizes_split_units,
    )


def check(p: MatchingProblem, groups: list[list[int]]) -> list[str]:
    """Every rule a set of groups breaks (for tests and for staff edits)."""
    problems = []
    seen = [x for g in groups for x in g]
    if sorted(seen) != sorted(p.people):
        problems.append("not everyone is in exactly one group")
    problems += [
        f"group {i + 1} has {len(g)} members, outside {p.min_size}–{p.max_size}"
        for i, g in enumerate(groups)
        if not p.min_size <= len(g) <= p.max_size
    ]
    where = {x: i for i, g in enumerate(groups) for x in g}
    for together in p.together:
        if len({where.get(x) for x in together if x in where}) > 1:
            problems.append("an existing group was split")
    return problems
