"""The lab instruments: small models a student drives after locking a prediction. Pure Python,
no Django; each takes the step's constants and the student's inputs and returns named figures.

`amdahl_profile` is Act I of Lab 09 (speed one component of a step's profile up by k: Amdahl's
law, the new profile, the hotspot and what optimizing it instead would have given);
`distributed_levers` is Act II (three levers on a 512-GPU step profile, MFU after them, the
engineer-weeks they cost against a budget). Their constants come from the lab file, so a lab
that differs only in numbers needs no code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Figures = dict[str, Any]


class InputError(ValueError):
    """An input outside what the instrument accepts; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _number(inputs: Mapping[str, Any], field: str, lo: float, hi: float) -> float:
    raw = inputs.get(field)
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(field, f"{field}: {raw!r} is not a number.") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise InputError(field, f"{field} must be between {lo:g} and {hi:g}.")
    return value


def amdahl(f: float, k: float) -> float:
    """End-to-end speed-up when a fraction f of the time runs k times faster."""
    return 1.0 / ((1.0 - f) + f / k)


def amdahl_profile(constants: Mapping[str, Any], inputs: Mapping[str, Any]) -> Figures:
    profile: dict[str, float] = dict(constants["profile"])
    target = str(inputs.get("target", ""))
    if target not in profile:
        raise InputError("target", f"target must be one of: {', '.join(profile)}.")
    k = _number(inputs, "k", 1.0, 100.0)
    f = profile[target]
    speedup = amdahl(f, k)
    after = {c: (v / k if c == target else v) for c, v in profile.items()}
    total = sum(after.values())
    hotspot = max(profile, key=lambda c: profile[c])
    return {
        "target": target,
        "k": k,
        "speedup": speedup,
        "improvement_pct": (speedup - 1.0) * 100.0,
        "ceiling": 1.0 / (1.0 - f),
        "before": profile,
        "after": {c: v / total for c, v in after.items()},
        "hotspot": hotspot,
        "hotspot_speedup": amdahl(profile[hotspot], k),
        "hotspot_improvement_pct": (amdahl(profile[hotspot], k) - 1.0) * 100.0,
        "profiler_overhead_pct": float(constants.get("profiler_overhead_pct", 0)),
    }


def distributed_levers(constants: Mapping[str, Any], inputs: Mapping[str, Any]) -> Figures:
    base: dict[str, float] = dict(constants["profile"])
    m_base = int(constants["microbatches"])
    m = _number(inputs, "microbatches", 1, 32)
    if m != int(m):
        raise InputError("microbatches", "microbatches is a whole number.")
    ar_k = _number(inputs, "allreduce_compression", 1.0, 4.0)
    workers = _number(inputs, "prefetch_workers", 1, 16)
    if workers != int(workers):
        raise InputError("prefetch_workers", "prefetch_workers is a whole number.")
    dl_speedup = max(1.0, math.sqrt(workers) / math.sqrt(constants["prefetch_workers"]))
    after = {
        "compute": base["compute"],
        "allreduce": base["allreduce"] / ar_k,
        "pipeline_bubble": base["pipeline_bubble"] * (m_base / m),
        "data_loading": base["data_loading"] / dl_speedup,
    }
    step = sum(after.values())  # of the baseline step
    speedup = 1.0 / step
    mfu_base = float(constants["mfu"])
    mfu = min(mfu_base * speedup, float(constants["mfu_ceiling"]))
    cost = constants["cost"]
    costs = {
        "pipeline": cost["pipeline_base"] + max(0.0, m - m_base) * cost["pipeline_per_microbatch"],
        "allreduce": 0.0
        if ar_k == 1.0
        else cost["allreduce_base"] + (ar_k - 1.0) * cost["allreduce_per_x"],
        "data_loading": 0.0
        if workers <= constants["prefetch_workers"]
        else cost["prefetch_base"]
        + (workers - constants["prefetch_workers"]) * cost["prefetch_per_worker"],
    }
    weeks = sum(costs.values())
    budget = float(constants["budget_weeks"])
    return {
        "after": after,
        "step_time": step,
        "speedup": speedup,
        "mfu": mfu,
        "mfu_gain": mfu - mfu_base,
        "costs": costs,
        "weeks": weeks,
        "budget_weeks": budget,
        "over_budget": weeks > budget,
        "target_reached": mfu >= float(constants["mfu_target"]) and weeks <= budget,
    }


INSTRUMENTS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Figures]] = {
    "amdahl-profile": amdahl_profile,
    "distributed-levers": distributed_levers,
}
