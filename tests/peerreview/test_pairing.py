"""Group pairing on its own: exact degrees, no self, no reciprocity, avoided pairs, seeds, and
impossible instances refused with a reason."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.peerreview.pairing import PairingProblem, check, pair, repair


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(2, 300),
    k=st.integers(1, 3),
    seed=st.integers(0, 1000),
    n_avoid=st.integers(0, 40),
)
def test_every_rule_holds_or_a_reason_is_given(n: int, k: int, seed: int, n_avoid: int) -> None:
    rng = random.Random(seed)
    groups = list(range(100, 100 + n))
    avoid = {frozenset(rng.sample(groups, 2)) for _ in range(n_avoid if n > 2 else 0)}
    p = PairingProblem(groups, k=k, avoid=avoid, seed=seed)
    result = pair(p)
    if not result.ok:
        assert result.reasons
        assert k > (n - 1) // 2 or n_avoid  # only these make it impossible
        return
    assert check(p, result.pairs) == []
    assert len(result.pairs) == n * k
    outs = dict.fromkeys(groups, 0)
    ins = dict.fromkeys(groups, 0)
    for a, b in result.pairs:
        assert a != b
        assert frozenset((a, b)) not in avoid
        outs[a] += 1
        ins[b] += 1
        if n >= 3:
            assert (b, a) not in result.pairs
    assert set(outs.values()) == {k}
    assert set(ins.values()) == {k}


def test_same_seed_same_pairing_and_a_new_seed_re_rolls() -> None:
    groups = list(range(8))
    a = pair(PairingProblem(groups, seed=7)).pairs
    assert a == pair(PairingProblem(groups, seed=7)).pairs
    assert any(pair(PairingProblem(groups, seed=s)).pairs != a for s in range(8, 12))


def test_two_groups_review_each_other_and_three_cannot_do_k_2() -> None:
    two = pair(PairingProblem([1, 2], k=1))
    assert two.ok
    assert sorted(two.pairs) == [(1, 2), (2, 1)]
    three = pair(PairingProblem([1, 2, 3], k=2, names={1: "A", 2: "B", 3: "C"}))
    assert not three.ok
    assert three.reasons == [
        "with 3 groups, reviewing 2 each forces two groups to review each other (k can be at most "
        "1)"
    ]


def test_avoided_pairs_that_leave_a_group_nobody_are_named() -> None:
    names = {i: f"G{i}" for i in range(5)}
    result = pair(
        PairingProblem(list(range(5)), avoid={frozenset((0, h)) for h in range(1, 5)}, names=names)
    )
    assert not result.ok
    assert result.reasons == [
        "G0 may review only 0 groups (the others are avoided) but must review 1"
    ]
    dense = pair(
        PairingProblem(
            list(range(5)),
            names=names,
            avoid={frozenset((0, 1)), frozenset((0, 2)), frozenset((1, 2)), frozenset((3, 4))},
        )
    )
    assert not dense.ok
    assert dense.reasons[0].startswith(
        "the avoided pairs leave no pairing: these cannot all hold together: "
    )


def test_window_partners_are_avoided_when_possible() -> None:
    groups = list(range(10))
    shared = {frozenset((i, i + 1)) for i in range(0, 10, 2)}
    for seed in range(5):
        result = pair(PairingProblem(groups, prefer_not=shared, seed=seed))
        assert result.ok
        assert result.soft_violations == 0
        assert not [x for x in result.pairs if frozenset(x) in shared]


def test_repair_after_an_exclusion_changes_as_few_pairs_as_possible() -> None:
    groups = list(range(12))
    first = pair(PairingProblem(groups, seed=3))
    gone = groups[4]
    rest = [g for g in groups if g != gone]
    again = repair(PairingProblem(rest, seed=3), first.pairs)
    assert again.ok
    assert check(PairingProblem(rest), again.pairs) == []
    kept = set(first.pairs) & set(again.pairs)
    # the excluded group's two pairs go; one new pair closes the gap
    assert len(kept) == len(first.pairs) - 2
