"""Roofline: arithmetic intensity, ridge point, time = max(compute, memory), decode steps."""

from __future__ import annotations

import numpy as np

from apps.perfcalc.calc.core import Result, fmt, sig
from apps.perfcalc.calc.formulas.common import BANDWIDTH, PEAK
from apps.perfcalc.calc.registry import Param, register

FLOPS = Param("flops", "Work", "FLOP", "Floating-point operations performed, e.g. 32 GFLOP.")
BYTES = Param("bytes_moved", "Data moved", "B", "Bytes read and written in memory, e.g. 16 GB.")


def _bound(memory_time: float, compute_time: float) -> str:
    if memory_time > compute_time:
        return "memory-bound"
    if compute_time > memory_time:
        return "compute-bound"
    return "balanced (at the ridge point)"


@register(
    name="arithmetic-intensity",
    title="Arithmetic intensity",
    topic="roofline",
    summary="FLOPs per byte moved: where a workload sits on the roofline's x-axis.",
    params=[FLOPS, BYTES],
    result_unit="FLOP/B",
    vector=lambda flops, bytes_moved: flops / bytes_moved,
    example={"flops": "32 GFLOP", "bytes_moved": "16 GB"},
)
def arithmetic_intensity(*, flops: float, bytes_moved: float) -> Result:
    ai = flops / bytes_moved
    return Result(
        "arithmetic-intensity",
        ai,
        "FLOP/B",
        "Arithmetic intensity",
        "AI = FLOPs / bytes",
        (f"AI = {fmt(flops, 'FLOP')} / {fmt(bytes_moved, 'B')}", f"AI = {sig(ai)} FLOP/B"),
    )


@register(
    name="ridge-point",
    title="Ridge point",
    topic="roofline",
    summary="The arithmetic intensity where a GPU turns from memory-bound to compute-bound.",
    params=[PEAK, BANDWIDTH],
    result_unit="FLOP/B",
    uses_gpu=True,
    vector=lambda peak_flops_per_s, bandwidth_bytes_per_s: peak_flops_per_s / bandwidth_bytes_per_s,
    example={"peak_flops_per_s": "989.5 TFLOPS", "bandwidth_bytes_per_s": "3.35 TB/s"},
)
def ridge_point(*, peak_flops_per_s: float, bandwidth_bytes_per_s: float) -> Result:
    ridge = peak_flops_per_s / bandwidth_bytes_per_s
    return Result(
        "ridge-point",
        ridge,
        "FLOP/B",
        "Ridge point",
        "ridge = peak FLOP/s / bandwidth",
        (
            f"ridge = {fmt(peak_flops_per_s, 'FLOP/s')} / {fmt(bandwidth_bytes_per_s, 'B/s')}",
            f"ridge = {sig(ridge)} FLOP/B: below it a kernel is memory-bound, above it "
            "compute-bound",
        ),
    )


def _roofline_v(flops, bytes_moved, peak_flops_per_s, bandwidth_bytes_per_s):
    compute = flops / peak_flops_per_s
    memory = bytes_moved / bandwidth_bytes_per_s
    return np.maximum(compute, memory), {
        "compute_time_s": compute,
        "memory_time_s": memory,
        "memory_bound": memory > compute,
    }


@register(
    name="roofline-time",
    title="Roofline time",
    topic="roofline",
    summary="Time = max(FLOPs / peak, bytes / bandwidth), naming the bound.",
    params=[FLOPS, BYTES, PEAK, BANDWIDTH],
    result_unit="s",
    uses_gpu=True,
    vector=_roofline_v,
    example={
        "flops": "32 GFLOP",
        "bytes_moved": "16 GB",
        "peak_flops_per_s": "1979 TFLOPS",
        "bandwidth_bytes_per_s": "3.35 TB/s",
    },
)
def roofline_time(
    *, flops: float, bytes_moved: float, peak_flops_per_s: float, bandwidth_bytes_per_s: float
) -> Result:
    compute = flops / peak_flops_per_s
    memory = bytes_moved / bandwidth_bytes_per_s
    t = max(compute, memory)
    ai = flops / bytes_moved
    ridge = peak_flops_per_s / bandwidth_bytes_per_s
    bound = _bound(memory, compute)
    attainable = min(peak_flops_per_s, ai * bandwidth_bytes_per_s)
    relation = "<" if ai < ridge else (">" if ai > ridge else "=")
    return Result(
        "roofline-time",
        t,
        "s",
        "Time",
        "T = max(FLOPs / peak, bytes / bandwidth)",
        (
            f"compute time = {fmt(flops, 'FLOP')} / {fmt(peak_flops_per_s, 'FLOP/s')} = "
            f"{fmt(compute, 's')}",
            f"memory time = {fmt(bytes_moved, 'B')} / {fmt(bandwidth_bytes_per_s, 'B/s')} = "
            f"{fmt(memory, 's')}",
            f"T = max({fmt(compute, 's')}, {fmt(memory, 's')}) = {fmt(t, 's')}",
            f"AI = {sig(ai)} FLOP/B {relation} ridge {sig(ridge)} FLOP/B, so the work is {bound}",
        ),
        classification=bound,
        extras={
            "compute_time_s": compute,
            "memory_time_s": memory,
            "arithmetic_intensity": ai,
            "ridge_point": ridge,
            "attainable_flops_per_s": attainable,
        },
    )


MODEL_BYTES = Param(
    "model_bytes", "Weights", "B", "Bytes of weights read per decode step, e.g. 16 GB."
)
FLOPS_PER_TOKEN = Param(
    "flops_per_token", "FLOPs per token", "FLOP", "≈ 2 × parameters, e.g. 32 GFLOP for 16B."
)


def _decode_v(model_bytes, flops_per_token, peak_flops_per_s, bandwidth_bytes_per_s, batch_size):
    t = np.maximum(
        flops_per_token * batch_size / peak_flops_per_s, model_bytes / bandwidth_bytes_per_s
    )
    return t, {"tokens_per_s": batch_size / t}


@register(
    name="decode-step-time",
    title="Decode step time",
    topic="roofline",
    summary="One decode step reads every weight once; the batch shares that read.",
    params=[
        MODEL_BYTES,
        FLOPS_PER_TOKEN,
        PEAK,
        BANDWIDTH,
        Param("batch_size", "Batch size", "", "Sequences decoded together.", kind="int", default=1),
    ],
    result_unit="s",
    uses_gpu=True,
    vector=_decode_v,
    example={
        "model_bytes": "16 GB",
        "flops_per_token": "32 GFLOP",
        "peak_flops_per_s": "1979 TFLOPS",
        "bandwidth_bytes_per_s": "3.35 TB/s",
    },
)
def decode_step_time(
    *,
    model_bytes: float,
    flops_per_token: float,
    peak_flops_per_s: float,
    bandwidth_bytes_per_s: float,
    batch_size: int,
) -> Result:
    compute = flops_per_token * batch_size / peak_flops_per_s
    memory = model_bytes / bandwidth_bytes_per_s
    t = max(compute, memory)
    bound = _bound(memory, compute)
    return Result(
        "decode-step-time",
        t,
        "s",
        "Time per decode step",
        "T = max(batch × FLOPs/token / peak, weight bytes / bandwidth)",
        (
            f"compute = {batch_size} × {fmt(flops_per_token, 'FLOP')} / "
            f"{fmt(peak_flops_per_s, 'FLOP/s')} = {fmt(compute, 's')}",
            f"memory = {fmt(model_bytes, 'B')} / {fmt(bandwidth_bytes_per_s, 'B/s')} = "
            f"{fmt(memory, 's')}",
            f"T = {fmt(t, 's')} ({bound}); {sig(batch_size / t)} tokens/s",
        ),
        classification=bound,
        convention="weights only; KV-cache reads not counted",
        extras={"tokens_per_s": batch_size / t, "compute_time_s": compute, "memory_time_s": memory},
    )


def _speedup_v(
    model_bytes,
    flops_per_token,
    peak_a_flops_per_s,
    bandwidth_a_bytes_per_s,
    peak_b_flops_per_s,
    bandwidth_b_bytes_per_s,
):
    ta = np.maximum(flops_per_token / peak_a_flops_per_s, model_bytes / bandwidth_a_bytes_per_s)
    tb = np.maximum(flops_per_token / peak_b_flops_per_s, model_bytes / bandwidth_b_bytes_per_s)
    return ta / tb


@register(
    name="decode-speedup",
    title="Decode speed-up between GPUs",
    topic="roofline",
    summary="How much faster GPU B decodes than GPU A at batch 1: the ratio of roofline times.",
    params=[
        MODEL_BYTES,
        FLOPS_PER_TOKEN,
        Param("peak_a_flops_per_s", "GPU A peak", "FLOP/s", "e.g. 624 TFLOPS (A100)."),
        Param("bandwidth_a_bytes_per_s", "GPU A bandwidth", "B/s", "e.g. 2.0 TB/s (A100)."),
        Param("peak_b_flops_per_s", "GPU B peak", "FLOP/s", "e.g. 1979 TFLOPS (H100)."),
        Param("bandwidth_b_bytes_per_s", "GPU B bandwidth", "B/s", "e.g. 3.35 TB/s (H100)."),
    ],
    result_unit="×",
    vector=_speedup_v,
    example={
        "model_bytes": "16 GB",
        "flops_per_token": "32 GFLOP",
        "peak_a_flops_per_s": "624 TFLOPS",
        "bandwidth_a_bytes_per_s": "2.0 TB/s",
        "peak_b_flops_per_s": "1979 TFLOPS",
        "bandwidth_b_bytes_per_s": "3.35 TB/s",
    },
)
def decode_speedup(
    *,
    model_bytes: float,
    flops_per_token: float,
    peak_a_flops_per_s: float,
    bandwidth_a_bytes_per_s: float,
    peak_b_flops_per_s: float,
    bandwidth_b_bytes_per_s: float,
) -> Result:
    ca, ma = flops_per_token / peak_a_flops_per_s, model_bytes / bandwidth_a_bytes_per_s
    cb, mb = flops_per_token / peak_b_flops_per_s, model_bytes / bandwidth_b_bytes_per_s
    ta, tb = max(ca, ma), max(cb, mb)
    ratio = ta / tb
    both_memory = ma > ca and mb > cb
    why = (
        f"both memory-bound, so the speed-up is the bandwidth ratio "
        f"{fmt(bandwidth_b_bytes_per_s, 'B/s')} / {fmt(bandwidth_a_bytes_per_s, 'B/s')}, "
        f"not the FLOPS ratio {sig(peak_b_flops_per_s / peak_a_flops_per_s)}×"
        if both_memory
        else "at least one GPU is compute-bound here"
    )
    return Result(
        "decode-speedup",
        ratio,
        "×",
        "Speed-up of B over A",
        "speed-up = T_A / T_B",
        (
            f"T_A = max({fmt(ca, 's')}, {fmt(ma, 's')}) = {fmt(ta, 's')} ({_bound(ma, ca)})",
            f"T_B = max({fmt(cb, 's')}, {fmt(mb, 's')}) = {fmt(tb, 's')} ({_bound(mb, cb)})",
            f"speed-up = {fmt(ta, 's')} / {fmt(tb, 's')} = {sig(ratio)}×: {why}",
        ),
        classification="memory-bound on both" if both_memory else None,
        extras={"time_a_s": ta, "time_b_s": tb},
    )
