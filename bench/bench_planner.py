"""The planner at cluster scale: every feasible layout of 512 H100s (64 nodes) for Lab 09's 70B
model, ranked in numpy. Prints the wall time of a plan (median of 20) and the layouts counted.

    python bench/bench_planner.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.perfcalc.calc.plan import plan  # noqa: E402
from bench.results import record  # noqa: E402

CASE = {
    "scale": "cluster",
    "model": "llama-3-70b",
    "nodes": 64,
    "tp": 8,
    "pp": 8,
    "dp": 8,
    "micro_batch": 1,
    "global_batch": 1024,
    "sequence_length": 4096,
}

first = plan(CASE)
walls = []
for _ in range(20):
    t = time.perf_counter()
    plan(CASE)
    walls.append(time.perf_counter() - t)
print(
    f"512 GPUs, {first.model.key}: {first.feasible} feasible layouts ranked; this one "
    f"(TP 8 × PP 8 × DP 8) is #{first.rank}, MFU {first.mfu:.1%}, step {first.time['total_s']:.2f} s"
)
ONE_NODE = {**CASE, "nodes": 1, "tp": 8, "pp": 1, "dp": 1, "global_batch": 8}
plan(ONE_NODE)
small = []  # the floor: the same call for one node (8 GPUs), the fewest layouts to rank
for _ in range(20):
    t = time.perf_counter()
    plan(ONE_NODE)
    small.append(time.perf_counter() - t)
record(
    "planner",
    "plan, 512 GPUs",
    statistics.median(walls) * 1000,
    "ms",
    floor=statistics.median(small) * 1000,
)
print(
    f"plan + ranking: median {statistics.median(walls) * 1000:.1f} ms, max {max(walls) * 1000:.1f} ms"
)
