"""Scaling laws: Amdahl (single and multi-component), Gustafson, pipeline bubbles, ROI."""

from __future__ import annotations

import math

from apps.perfcalc.calc.core import InputError, Result, pct, sig
from apps.perfcalc.calc.registry import Param, register

FRACTION = Param("fraction", "Affected fraction f", "fraction",
                 "Share of run time the optimisation touches, e.g. 0.12 or 12%.", kind="fraction")  # fmt: skip
SPEEDUP = Param("speedup", "Speed-up of that part k", "", "e.g. 3 for a kernel made 3× faster.",
                kind="factor")  # fmt: skip


def _amdahl_v(fraction, speedup):
    return 1 / ((1 - fraction) + fraction / speedup)


@register(
    name="amdahl", title="Amdahl's law", topic="scaling",
    summary="Overall speed-up = 1 / ((1 − f) + f/k); never more than 1/(1 − f).",
    params=[FRACTION, SPEEDUP], result_unit="×", vector=_amdahl_v,
    example={"fraction": 0.12, "speedup": 3},
)  # fmt: skip
def amdahl(*, fraction: float, speedup: float) -> Result:
    s = float(_amdahl_v(fraction, speedup))
    steps = [f"S = 1 / ((1 − {sig(fraction)}) + {sig(fraction)} / {sig(speedup)})",
             f"S = 1 / ({sig(1 - fraction)} + {sig(fraction / speedup)}) = 1 / {sig(1 / s)} = {sig(s)}×",
             f"end-to-end gain = {pct(s - 1)}"]  # fmt: skip
    extras: dict[str, float] = {"gain": s - 1}
    if fraction < 1:
        ceiling = 1 / (1 - fraction)
        steps.append(f"ceiling as k → ∞: 1 / (1 − {sig(fraction)}) = {sig(ceiling)}×")
        extras["ceiling"] = ceiling
    return Result("amdahl", s, "×", "Overall speed-up", "S = 1 / ((1 − f) + f/k)", tuple(steps),
                  extras=extras)  # fmt: skip


@register(
    name="amdahl-multi", title="Multi-component Amdahl", topic="scaling",
    summary="Several parts sped up at once: S = 1 / Σ(fᵢ / kᵢ), with Σfᵢ = 1.",
    params=[Param("fractions", "Fractions fᵢ", "fraction", "Shares of step time, adding up to 1, "
                  "e.g. 0.45, 0.30, 0.15, 0.10.", kind="fractions"),
            Param("speedups", "Speed-ups kᵢ", "", "One per fraction (1 = unchanged), e.g. 1, 2, 1, 1.",
                  kind="factors")],
    result_unit="×",
    example={"fractions": [0.55, 0.45], "speedups": [1, 2]},
)  # fmt: skip
def amdahl_multi(*, fractions: tuple[float, ...], speedups: tuple[float, ...]) -> Result:
    if len(fractions) != len(speedups):
        raise InputError("speedups", f"give one speed-up per fraction ({len(fractions)})")
    total = math.fsum(fractions)
    if abs(total - 1) > 1e-6:
        raise InputError("fractions", f"must add up to 1 (they add up to {sig(total)})")
    new_time = math.fsum(f / k for f, k in zip(fractions, speedups, strict=True))
    s = 1 / new_time
    terms = " + ".join(f"{sig(f)}/{sig(k)}" for f, k in zip(fractions, speedups, strict=True))
    return Result(
        "amdahl-multi", s, "×", "Overall speed-up", "S = 1 / Σ(fᵢ / kᵢ)",
        (f"new step time = {terms} = {sig(new_time)} of the old", f"S = 1 / {sig(new_time)} = {sig(s)}×",
         f"end-to-end gain = {pct(s - 1)}"),
        extras={"new_time_fraction": new_time, "gain": s - 1},
    )  # fmt: skip


def _gustafson_v(scale, serial_fraction):
    return scale - serial_fraction * (scale - 1)


@register(
    name="gustafson", title="Gustafson's law", topic="scaling",
    summary="Scaled speed-up when the work grows with the machine: S = N − s·(N − 1).",
    params=[Param("scale", "Processors N", "", "Processors (or the factor the machine grows by).",
                  kind="factor"),
            Param("serial_fraction", "Serial fraction s", "fraction",
                  "Share of the (scaled) run that stays serial.", kind="fraction")],
    result_unit="×", vector=_gustafson_v,
    example={"scale": 64, "serial_fraction": 0.05},
)  # fmt: skip
def gustafson(*, scale: float, serial_fraction: float) -> Result:
    s = float(_gustafson_v(scale, serial_fraction))
    return Result(
        "gustafson", s, "×", "Scaled speed-up", "S = N − s·(N − 1)",
        (f"S = {sig(scale)} − {sig(serial_fraction)} × ({sig(scale)} − 1) = {sig(s)}×",),
    )  # fmt: skip


BUBBLE_CONVENTIONS = {
    "gpipe": ("(PP − 1) / (m + PP − 1)", "share of the whole schedule spent idle (GPipe)"),
    "megatron": ("(PP − 1) / m", "idle time relative to useful compute time (Megatron-LM)"),
    "course-lab": ("(PP − 1) / (PP · m)", "the performance-engineering lab's convention"),
}


def _bubble(pp: float, m: float, convention: str) -> float:
    if convention == "gpipe":
        return (pp - 1) / (m + pp - 1)
    if convention == "megatron":
        return (pp - 1) / m
    return (pp - 1) / (pp * m)


@register(
    name="pipeline-bubble", title="Pipeline bubble", topic="scaling",
    summary="Idle share of a pipeline-parallel step, under a named convention.",
    params=[Param("stages", "Pipeline stages PP", "", "e.g. 8.", kind="int"),
            Param("microbatches", "Micro-batches m", "", "Per step, e.g. 4.", kind="int"),
            Param("convention", "Convention", "", "gpipe (default): (PP−1)/(m+PP−1), share of the "
                  "schedule. megatron: (PP−1)/m, relative to compute. course-lab: (PP−1)/(PP·m).",
                  kind="choice", default="gpipe", choices=tuple(BUBBLE_CONVENTIONS))],
    result_unit="fraction",
    vector=lambda stages, microbatches, convention: _bubble(stages, microbatches, convention),
    example={"stages": 8, "microbatches": 4, "convention": "gpipe"},
)  # fmt: skip
def pipeline_bubble(*, stages: int, microbatches: int, convention: str) -> Result:
    value = _bubble(stages, microbatches, convention)
    equation, meaning = BUBBLE_CONVENTIONS[convention]
    others = {name: _bubble(stages, microbatches, name) for name in BUBBLE_CONVENTIONS}
    substituted = {
        "gpipe": f"({stages} − 1) / ({microbatches} + {stages} − 1) = {stages - 1}/{microbatches + stages - 1}",
        "megatron": f"({stages} − 1) / {microbatches} = {stages - 1}/{microbatches}",
        "course-lab": f"({stages} − 1) / ({stages} × {microbatches}) = {stages - 1}/{stages * microbatches}",
    }[convention]
    return Result(
        "pipeline-bubble", value, "fraction", "Bubble", f"bubble = {equation}",
        (f"{convention}: {meaning}", f"bubble = {substituted} = {sig(value)} ({pct(value)})",
         "other conventions: " + ", ".join(f"{k} {sig(v)}" for k, v in others.items() if k != convention)),
        convention=convention, extras={"conventions": others},
    )  # fmt: skip


@register(
    name="optimization-roi", title="Optimisation ROI", topic="scaling",
    summary="Gain per engineer-week: compare fixes by what they return for the effort.",
    params=[Param("gain", "Gain", "", "What the fix buys, e.g. MFU points (8.2) or % speed-up.",
                  kind="nonnegative"),
            Param("engineer_weeks", "Effort", "", "Engineer-weeks to build it, e.g. 3.")],
    result_unit="per engineer-week",
    vector=lambda gain, engineer_weeks: gain / engineer_weeks,
    example={"gain": 8.2, "engineer_weeks": 3},
)  # fmt: skip
def optimization_roi(*, gain: float, engineer_weeks: float) -> Result:
    roi = gain / engineer_weeks
    return Result(
        "optimization-roi", roi, "per engineer-week", "ROI", "ROI = gain / engineer-weeks",
        (f"ROI = {sig(gain)} / {sig(engineer_weeks)} weeks = {sig(roi)} per engineer-week",),
    )  # fmt: skip
