"""The scribe solver on its own: every hard rule on random instances, optimality against brute
force on tiny ones, determinism, and infeasible instances refused with a reason in words."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.scribing.solver import Lec, Problem, Stu, solve, violations, weight

D0 = dt.date(2026, 1, 13)


def lectures(n: int) -> list[Lec]:
    """Tuesdays and Thursdays from Jan 13."""
    return [
        Lec(i, f"lecture {i}", D0 + dt.timedelta(days=(i - 1) // 2 * 7 + (2 if i % 2 == 0 else 0)))
        for i in range(1, n + 1)
    ]


@st.composite
def instances(draw: st.DrawFn) -> Problem:
    n_lec = draw(st.integers(4, 12))
    lecs = lectures(n_lec)
    n_stu = draw(st.integers(1, 25))
    studs = [Stu(i, f"student{i:02d}", group=i // 4) for i in range(n_stu)]
    cannot, prefer = set(), {}
    for s in studs:
        picks = draw(st.lists(st.sampled_from(lecs), max_size=5, unique_by=lambda lec: lec.id))
        for rank, lec in enumerate(picks[:3], start=1):
            prefer[s.id, lec.id] = rank
        for lec in picks[3:]:
            cannot.add((s.id, lec.id))
    spread = set(draw(st.lists(st.integers(0, 6), max_size=2)))
    return Problem(
        studs,
        lecs,
        cannot=cannot,
        prefer=prefer,
        spread=spread,
        seed=draw(st.integers(0, 5)),
        deterministic_seconds=5,
    )


@settings(max_examples=60, deadline=None)
@given(p=instances())
def test_every_hard_rule_holds_or_a_reason_is_given(p: Problem) -> None:
    sol = solve(p)
    if not sol.ok:
        assert sol.reasons
        assert all(isinstance(r, str) and r for r in sol.reasons)
        return
    assert violations(p, sol.pairs) == []
    per = Counter(s for s, _ in sol.pairs)
    assert all(per[s.id] == 2 for s in p.students)
    loads = Counter(lid for _, lid in sol.pairs)
    counts = [loads.get(lec.id, 0) for lec in p.lectures]
    assert max(counts) - min(counts) <= 1
    days = {lec.id: lec.day for lec in p.lectures}
    for s in p.students:
        mine = sorted(days[lid] for sid, lid in sol.pairs if sid == s.id)
        assert (mine[1] - mine[0]).days >= 7
    assert not (set(sol.pairs) & p.cannot)
    assert sol.score == sum(
        weight(p.prefer[pair], p.max_rank) for pair in sol.pairs if pair in p.prefer
    )


def brute_force_best(p: Problem) -> int | None:
    """The best score over every assignment that keeps the rules (tiny instances only)."""
    options = [
        [
            c
            for c in itertools.combinations(p.lectures, 2)
            if abs((c[1].day - c[0].day).days) >= 7
            and not {(s.id, c[0].id), (s.id, c[1].id)} & p.cannot
        ]
        for s in p.students
    ]
    best = None
    for choice in itertools.product(*options):
        pairs = [(s.id, lec.id) for s, c in zip(p.students, choice, strict=True) for lec in c]
        if violations(p, pairs):
            continue
        score = sum(weight(p.prefer[pair], p.max_rank) for pair in pairs if pair in p.prefer)
        best = score if best is None else max(best, score)
    return best


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_optimal_against_brute_force_on_tiny_instances(seed: int) -> None:
    import random

    rng = random.Random(seed)
    lecs = lectures(6)
    studs = [Stu(i, f"s{i}") for i in range(rng.randint(2, 4))]
    prefer = {
        (s.id, lec.id): r for s in studs for r, lec in enumerate(rng.sample(lecs, 3), start=1)
    }
    cannot = {(s.id, rng.choice(lecs).id) for s in studs if rng.random() < 0.5} - set(prefer)
    p = Problem(studs, lecs, prefer=prefer, cannot=cannot, deterministic_seconds=5)
    sol = solve(p)
    best = brute_force_best(p)
    if best is None:
        assert not sol.ok
    else:
        assert sol.ok
        assert sol.optimal
        assert sol.score == best


def test_same_inputs_and_seed_give_the_same_assignment() -> None:
    import random

    rng = random.Random(3)
    lecs = lectures(26)
    studs = [Stu(i, f"s{i}", group=i // 5) for i in range(60)]
    prefer = {
        (s.id, lec.id): r for s in studs for r, lec in enumerate(rng.sample(lecs, 3), start=1)
    }
    a = solve(Problem(studs, lecs, prefer=prefer, seed=4))
    b = solve(Problem(studs, lecs, prefer=prefer, seed=4))
    assert a.ok
    assert a.pairs == b.pairs
    assert a.score == b.score


def test_a_student_who_can_take_one_lecture_is_named() -> None:
    lecs = lectures(26)
    studs = [Stu(i, f"student{i:02d}") for i in range(40)]
    cannot = {(s.id, lec.id) for s in studs for lec in lecs if lec.id != 26}
    sol = solve(Problem(studs, lecs, cannot=cannot))
    assert not sol.ok
    assert "student00 can take only lecture 26" in sol.reasons
    assert any(r.startswith("lecture 1 has 0 available students but needs") for r in sol.reasons)


def test_a_lecture_without_enough_available_students_is_named() -> None:
    lecs = lectures(4)
    studs = [Stu(i, f"student{i:02d}") for i in range(6)]
    cannot = {(s.id, 3) for s in studs[1:]}
    sol = solve(Problem(studs, lecs, cannot=cannot))
    assert not sol.ok
    assert "lecture 3 has 1 available student but needs 3" in sol.reasons


def test_spacing_that_cannot_work_is_explained_from_the_core() -> None:
    lecs = [
        Lec(1, "lecture 1", D0),
        Lec(2, "lecture 2", D0 + dt.timedelta(days=2)),
        Lec(3, "lecture 3", D0 + dt.timedelta(days=9)),
    ]
    sol = solve(Problem([Stu(i, f"student{i:02d}") for i in range(3)], lecs))
    assert not sol.ok
    assert sol.reasons[0].startswith("these rules cannot all hold (at least 7 days apart")
    assert "lecture 3 takes 2 scribes" in sol.reasons[0]


def test_published_duties_stay_when_solving_again() -> None:
    lecs = lectures(8)
    studs = [Stu(i, f"s{i}") for i in range(8)]
    fixed = {(0, 1), (0, 5)}
    prefer = {(0, 2): 1, (0, 6): 2}
    sol = solve(Problem(studs, lecs, fixed=fixed, prefer=prefer))
    assert sol.ok
    assert fixed <= set(sol.pairs)


def test_spread_groups_never_share_a_lecture() -> None:
    lecs = lectures(10)
    studs = [Stu(i, f"s{i}", group=0 if i < 5 else 1) for i in range(10)]
    prefer = {(i, 1): 1 for i in range(5)}  # everyone in group 0 wants lecture 1
    sol = solve(Problem(studs, lecs, prefer=prefer, spread={0}))
    assert sol.ok
    on_1 = [s for s, lid in sol.pairs if lid == 1 and s < 5]
    assert len(on_1) == 1
