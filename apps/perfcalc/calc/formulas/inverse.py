"""Inverse design: from a latency target to the hardware it needs, and which GPUs meet it."""

from __future__ import annotations

from typing import Any

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.core import Result, fmt
from apps.perfcalc.calc.registry import Param, register

MODEL_BYTES = Param(
    "model_bytes",
    "Bytes per token",
    "B",
    "Bytes read per generated token (all weights at batch 1), e.g. 16 GB.",
)
LATENCY = Param("latency_s", "Latency target", "s", "Per-token latency target, e.g. 40 ms.")


@register(
    name="required-bandwidth",
    title="Required bandwidth for a latency target",
    topic="inverse",
    summary="Memory-bound decode: bandwidth ≥ bytes per token / latency.",
    params=[MODEL_BYTES, LATENCY],
    result_unit="B/s",
    vector=lambda model_bytes, latency_s: model_bytes / latency_s,
    example={"model_bytes": "16 GB", "latency_s": "40 ms"},
)
def required_bandwidth(*, model_bytes: float, latency_s: float) -> Result:
    bw = model_bytes / latency_s
    return Result(
        "required-bandwidth",
        bw,
        "B/s",
        "Minimum memory bandwidth",
        "BW ≥ bytes / latency",
        (f"BW = {fmt(model_bytes, 'B')} / {fmt(latency_s, 's')} = {fmt(bw, 'B/s')}",),
    )


@register(
    name="required-flops",
    title="Required FLOP/s for a latency target",
    topic="inverse",
    summary="Compute-bound work: FLOP/s ≥ FLOPs / latency.",
    params=[Param("flops", "FLOPs", "FLOP", "Work per request or token."), LATENCY],
    result_unit="FLOP/s",
    vector=lambda flops, latency_s: flops / latency_s,
    example={"flops": "32 GFLOP", "latency_s": "40 ms"},
)
def required_flops(*, flops: float, latency_s: float) -> Result:
    rate = flops / latency_s
    return Result(
        "required-flops",
        rate,
        "FLOP/s",
        "Minimum compute rate",
        "FLOP/s ≥ FLOPs / latency",
        (f"FLOP/s = {fmt(flops, 'FLOP')} / {fmt(latency_s, 's')} = {fmt(rate, 'FLOP/s')}",),
    )


def _shortfall(row: dict) -> str:
    """Why one GPU misses the target: too little bandwidth, else too little memory."""
    if not row["meets_bandwidth"]:
        return f"bandwidth {fmt(row['bandwidth_bytes_per_s'], 'B/s')} too low"
    return f"memory {fmt(row['memory_bytes'], 'B')} too small"


@register(
    name="gpus-meeting-target",
    title="Which GPUs meet the target",
    topic="inverse",
    summary="Catalog GPUs with enough bandwidth for the latency AND enough memory for the model.",
    params=[
        MODEL_BYTES,
        LATENCY,
        Param(
            "model_memory_bytes",
            "Model memory",
            "B",
            "Bytes the GPU must hold (0 = same as bytes per token).",
            kind="nonnegative",
            default=0.0,
        ),
    ],
    result_unit="GPUs",
    example={"model_bytes": "16 GB", "latency_s": "40 ms"},
)
def gpus_meeting_target(
    *, model_bytes: float, latency_s: float, model_memory_bytes: float
) -> Result:
    need_bw = model_bytes / latency_s
    need_mem = model_memory_bytes or model_bytes
    rows: list[dict[str, Any]] = []
    for g in catalog.gpus().values():
        ok_bw = g.bandwidth_bytes_per_s >= need_bw
        ok_mem = g.memory_bytes >= need_mem
        rows.append(
            {
                "gpu": g.key,
                "name": g.name,
                "bandwidth_bytes_per_s": g.bandwidth_bytes_per_s,
                "memory_bytes": g.memory_bytes,
                "meets_bandwidth": ok_bw,
                "fits_memory": ok_mem,
                "meets": ok_bw and ok_mem,
            }
        )
    meets = [r["name"] for r in rows if r["meets"]]
    fails = [f"{r['name']} ({_shortfall(r)})" for r in rows if not r["meets"]]
    return Result(
        "gpus-meeting-target",
        float(len(meets)),
        "GPUs",
        "Catalog GPUs that meet the target",
        "BW_gpu ≥ bytes/latency and memory_gpu ≥ model bytes",
        (
            f"required bandwidth = {fmt(model_bytes, 'B')} / {fmt(latency_s, 's')} = "
            f"{fmt(need_bw, 'B/s')}",
            f"required memory = {fmt(need_mem, 'B')}",
            "meet both: " + (", ".join(meets) or "none"),
            "fail: " + (", ".join(fails) or "none"),
        ),
        extras={"gpus": rows, "required_bandwidth_bytes_per_s": need_bw},
    )
