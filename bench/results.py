"""Bench figures, each beside the floor measured in the same run, kept in bench/results.json.

Machines of one kind differ 2–3× in speed, so a figure in seconds says little by itself; its ratio
to what the same machine does at the same moment with the least work that could give the same
result (the floor) says how much of the time is ours. Every bench calls `record` for its figures;
`make bench` runs each bench BENCH_REPEAT times (3 by default) under one BENCH_RUN id, and
`python bench/results.py` prints min / median / max of each figure and ratio per run id, so two
runs (before and after a change) read side by side.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = Path(os.environ.get("BENCH_RESULTS", str(ROOT / "bench" / "results.json")))


def _commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip() or "?"


def record(
    bench: str,
    figure: str,
    value: float,
    unit: str,
    *,
    floor: float | None = None,
    target: float | None = None,
    higher_is_better: bool = False,
) -> float | None:
    """Keep one figure (and its floor); print it with the ratio. The ratio is always "how many
    times the floor's cost": value / floor for times, floor / value for rates."""
    ratio = None
    if floor:
        ratio = (floor / value if higher_is_better else value / floor) if value else None
    row = {
        "run": os.environ.get("BENCH_RUN", "adhoc"),
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": f"{platform.node()} ({os.cpu_count()} cores)",
        "bench": bench,
        "figure": figure,
        "value": value,
        "unit": unit,
        "floor": floor,
        "ratio": ratio,
        "target": target,
    }
    rows = json.loads(FILE.read_text()) if FILE.exists() else []
    rows.append(row)
    FILE.write_text(json.dumps(rows, indent=1) + "\n")
    if ratio is not None:
        goal = f" (target ≤ {target}×)" if target else ""
        print(
            f"  → {figure}: {value:,.3g} {unit}, floor {floor:,.3g} {unit}: {ratio:.2f}× the floor{goal}"
        )
    return ratio


def summary(rows: list[dict[str, object]]) -> list[str]:
    """min / median / max of each (run, bench, figure): its value and its ratio."""
    groups: dict[tuple[str, str, str], list[dict[str, object]]] = {}
    for r in rows:
        groups.setdefault((str(r["run"]), str(r["bench"]), str(r["figure"])), []).append(r)
    out = []
    for (run, bench, figure), rs in sorted(groups.items()):
        vals = [float(r["value"]) for r in rs]  # type: ignore[arg-type]
        ratios = [float(r["ratio"]) for r in rs if r["ratio"] is not None]  # type: ignore[arg-type]
        unit = rs[0]["unit"]
        line = (
            f"{run:<22} {bench:<11} {figure:<32} n={len(rs)}  "
            f"{min(vals):,.3g} / {statistics.median(vals):,.3g} / {max(vals):,.3g} {unit}"
        )
        if ratios:
            line += (
                f"   ratio {min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f}"
            )
            if rs[0]["target"]:
                line += f" (target {rs[0]['target']})"
        out.append(line)
    return out


if __name__ == "__main__":
    if not FILE.exists():
        print(f"no results yet: run `make bench` ({FILE})")
        sys.exit(0)
    rows = json.loads(FILE.read_text())
    wanted = sys.argv[1:]
    print(f"{'run':<22} {'bench':<11} {'figure':<32} n    min / median / max")
    for line in summary([r for r in rows if not wanted or r["run"] in wanted]):
        print(line)
