"""Peer-review pairing at scale: 1,000 groups, each reviewing k = 2 others, with 200 random pairs
to avoid and 300 pairs that shared a sharing window (avoided when possible). Prints the time per
pairing over 5 seeds, the rules broken (0 expected) and the window pairs used; then a re-pairing
after one group is left out (pairs changed). Never passes or fails."""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.peerreview.pairing import PairingProblem, check, pair, repair  # noqa: E402
from bench.results import record  # noqa: E402

N, K = 1000, 2
rng = random.Random(2026)
groups = list(range(1, N + 1))
avoid: set[frozenset[int]] = set()
while len(avoid) < 200:
    avoid.add(frozenset(rng.sample(groups, 2)))
shared: set[frozenset[int]] = set()
while len(shared) < 300:
    shared.add(frozenset(rng.sample(groups, 2)))
times = []
for seed in range(5):
    p = PairingProblem(groups, k=K, avoid=avoid, prefer_not=shared, seed=seed)
    t = time.perf_counter()
    result = pair(p)
    times.append(time.perf_counter() - t)
    print(
        f"seed {seed}: {len(result.pairs):,} pairs in {times[-1] * 1000:.0f} ms ({result.method}); "
        f"rules broken: {len(check(p, result.pairs))}; window pairs used: {result.soft_violations}"
    )
print(
    f"pairing {N:,} groups, k = {K}, 200 avoided pairs: median "
    f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
)
free = []  # the floor: the same groups and k with no pairs to avoid (the rules' cost)
for seed in range(5):
    p = PairingProblem(groups, k=K, seed=seed)
    t = time.perf_counter()
    pair(p)
    free.append(time.perf_counter() - t)
record(
    "pairing",
    f"pair {N:,} groups, k = {K}",
    statistics.median(times) * 1000,
    "ms",
    floor=statistics.median(free) * 1000,
)
small = list(range(1, 101))
first = pair(PairingProblem(small, k=K, seed=1))
t = time.perf_counter()
again = repair(PairingProblem(small[1:], k=K, seed=1), first.pairs)
print(
    f"re-pairing 99 groups after one is left out: {len(set(first.pairs) - set(again.pairs))} pairs "
    f"changed (of {len(first.pairs)}) in {(time.perf_counter() - t) * 1000:.0f} ms"
)
