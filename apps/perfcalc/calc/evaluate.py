"""Evaluate a formula from raw inputs, taking hardware figures from a catalog on request.

`gpu` (+ `gpu_precision`, default bf16, and `sparse`, default false) fills peak FLOP/s,
bandwidth and GPU memory where the formula uses them and the caller did not give them; the
worked solution then starts with the figures used and their source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.catalog import GPU, PRECISIONS
from apps.perfcalc.calc.core import InputError, Result, fmt
from apps.perfcalc.calc.registry import InputErrors, get

HARDWARE_FIELDS = ("gpu", "gpu_precision", "sparse")


def evaluate(name: str, raw: Mapping[str, Any], *, gpus: Mapping[str, GPU] | None = None) -> Result:
    formula = get(name)
    inputs = {k: v for k, v in raw.items() if k not in HARDWARE_FIELDS}
    gpu_key = raw.get("gpu")
    if not gpu_key:
        return formula(**inputs)
    if not formula.uses_gpu:
        raise InputErrors([InputError("gpu", "this formula takes no GPU")])
    table = gpus if gpus is not None else catalog.gpus()
    gpu = table.get(str(gpu_key))
    if gpu is None:
        raise InputErrors(
            [InputError("gpu", f"unknown GPU {gpu_key!r}; choose one of {', '.join(table)}")]
        )
    precision = str(raw.get("gpu_precision") or "bf16")
    if precision not in PRECISIONS:
        raise InputErrors([InputError("gpu_precision", f"must be one of: {', '.join(PRECISIONS)}")])
    sparse = raw.get("sparse") in {True, "true", "1", "on"}
    names = {p.name for p in formula.params}
    filled: list[str] = []
    if "peak_flops_per_s" in names and not inputs.get("peak_flops_per_s"):
        try:
            inputs["peak_flops_per_s"] = gpu.peak(precision, sparse=sparse)
        except InputError as exc:
            raise InputErrors([InputError("gpu_precision", exc.message)]) from None
        kind = "sparse (2:4)" if sparse else "dense"
        filled.append(
            f"{precision.upper()} {kind} peak {fmt(inputs['peak_flops_per_s'], 'FLOP/s')}"
        )
    if "bandwidth_bytes_per_s" in names and not inputs.get("bandwidth_bytes_per_s"):
        inputs["bandwidth_bytes_per_s"] = gpu.bandwidth_bytes_per_s
        filled.append(f"memory bandwidth {fmt(gpu.bandwidth_bytes_per_s, 'B/s')}")
    if "gpu_memory_bytes" in names and not inputs.get("gpu_memory_bytes"):
        inputs["gpu_memory_bytes"] = gpu.memory_bytes
        filled.append(f"memory {fmt(gpu.memory_bytes, 'B')}")
    result = formula(**inputs)
    if not filled:
        return result
    note = f"{gpu.name}: " + ", ".join(filled) + f" (source: {gpu.source})"
    return dataclasses.replace(
        result,
        steps=(note, *result.steps),
        extras={**result.extras, "gpu": gpu.key, "gpu_name": gpu.name, "sparse": sparse},
    )
