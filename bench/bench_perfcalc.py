"""Calculator speed: vectorised roofline evaluations per second (target ≥ 1,000,000/s) and the
latency of one API call in-process (target p50 < 10 ms). Prints figures; never passes or fails."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3")
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from apps.core.models import User  # noqa: E402
from apps.perfcalc.calc.registry import evaluate_batch, get  # noqa: E402
from bench.results import record  # noqa: E402

rng = np.random.default_rng(0)
n = 1_000_000
inputs = {
    "flops": rng.uniform(1e9, 1e13, n),
    "bytes_moved": rng.uniform(1e6, 1e11, n),
    "peak_flops_per_s": 989.5e12,
    "bandwidth_bytes_per_s": 3.35e12,
}
evaluate_batch("roofline-time", inputs)  # warm
runs = []
for _ in range(5):
    t0 = time.perf_counter()
    out = evaluate_batch("roofline-time", inputs)
    runs.append(time.perf_counter() - t0)
best = min(runs)
print(
    f"vectorised roofline      {n / best:>14,.0f} evaluations/s  ({n:,} rows in {1000 * best:.1f} "
    f"ms, validation included; {int(out.valid.sum()):,} valid)"
)
bare = []  # the floor: the roofline itself in bare numpy over the same arrays
for _ in range(5):
    t0 = time.perf_counter()
    np.maximum(
        inputs["flops"] / inputs["peak_flops_per_s"],
        inputs["bytes_moved"] / inputs["bandwidth_bytes_per_s"],
    )
    bare.append(time.perf_counter() - t0)
record(
    "perfcalc",
    "vectorised roofline, 1M rows",
    n / best,
    "evaluations/s",
    floor=n / min(bare),
    higher_is_better=True,
)

t0 = time.perf_counter()
k = 20_000
for i in range(k):
    get("roofline-time")(
        flops=32e9 + i, bytes_moved=16e9, peak_flops_per_s=1979e12, bandwidth_bytes_per_s=3.35e12
    )
print(f"scalar with trace        {k / (time.perf_counter() - t0):>14,.0f} calls/s")

call_command("migrate", verbosity=0)
user = User.objects.create_user("bench@example.edu", "x")
client = APIClient()
client.force_authenticate(user)
body = {"flops": "32 GFLOP", "bytes_moved": "16 GB", "gpu": "h100-sxm"}
for _ in range(50):
    client.post("/api/v1/perfcalc/roofline-time/", body, format="json")
lat = []
for _ in range(500):
    t0 = time.perf_counter()
    r = client.post("/api/v1/perfcalc/roofline-time/", body, format="json")
    lat.append(1000 * (time.perf_counter() - t0))
    assert r.status_code == 200
lat.sort()
floor_lat = []  # the floor: the least an authenticated API call costs, same client
for _ in range(200):
    t0 = time.perf_counter()
    client.get("/api/v1/me/")
    floor_lat.append(1000 * (time.perf_counter() - t0))
record("perfcalc", "API call p50", statistics.median(lat), "ms", floor=statistics.median(floor_lat))
print(
    f"API call in-process      p50 {statistics.median(lat):.2f} ms, p95 "
    f"{lat[int(0.95 * len(lat))]:.2f} ms, p99 {lat[int(0.99 * len(lat))]:.2f} ms  (500 calls)"
)
