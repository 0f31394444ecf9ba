"""Evaluate a formula from raw inputs, taking hardware figures from a catalog on request.

`gpu` (+ `gpu_precision`, default bf16, and `sparse`, default false) fills peak FLOP/s,
bandwidth and GPU memory where the formula uses them and the caller did not give them; `model`
fills model dimensions (layers, heads, parameters, …) the same way from the model catalog. The
worked solution then starts with the figures used and their source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.catalog import GPU, PRECISIONS
from apps.perfcalc.calc.core import InputError, Result, fmt, sig
from apps.perfcalc.calc.registry import InputErrors, get

HARDWARE_FIELDS = ("gpu", "gpu_precision", "sparse", "model")


def _with_model(name: str, inputs: dict[str, Any], key: Any) -> tuple[dict[str, Any], str]:
    """Fill the model's figures into the inputs the caller left empty; the note for the steps."""
    formula = get(name)
    if not formula.uses_model:
        raise InputErrors([InputError("model", "this formula takes no model")])
    found = catalog.models().get(str(key))
    if found is None:
        raise InputErrors(
            [
                InputError(
                    "model", f"unknown model {key!r}; choose one of {', '.join(catalog.models())}"
                )
            ]
        )
    used: list[str] = []
    for param, figure in formula.model_fields.items():
        if inputs.get(param) not in (None, ""):
            continue  # what the caller typed wins over the catalog
        value = found.get(figure)
        if value is None:
            kind = (
                "an MLA" if figure in {"kv_lora_rank", "rope_head_dim"} else "a mixture-of-experts"
            )
            raise InputErrors(
                [
                    InputError(
                        "model",
                        f"{found.name} has no {catalog.FIELD_WORDS[figure]} (not {kind} model); "
                        f"type {param} in instead",
                    )
                ]
            )
        inputs[param] = int(value) if float(value).is_integer() and value < 1e6 else value
        shown = f"{sig(value / 1e9)}B" if value >= 1e9 else f"{value:g}"
        used.append(f"{catalog.FIELD_WORDS[figure]} {shown}")
    note = f"{found.name}: " + ", ".join(used) + f" (source: {found.source})"
    return inputs, note


def evaluate(name: str, raw: Mapping[str, Any], *, gpus: Mapping[str, GPU] | None = None) -> Result:
    formula = get(name)
    inputs = {k: v for k, v in raw.items() if k not in HARDWARE_FIELDS}
    model_note = None
    if raw.get("model"):
        inputs, model_note = _with_model(name, inputs, raw["model"])
        result = evaluate(
            name,
            {**inputs, **{k: v for k, v in raw.items() if k in HARDWARE_FIELDS and k != "model"}},
            gpus=gpus,
        )
        return dataclasses.replace(
            result,
            steps=(model_note, *result.steps),
            extras={**result.extras, "model": str(raw["model"])},
        )
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
