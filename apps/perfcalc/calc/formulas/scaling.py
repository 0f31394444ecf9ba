"""Scaling laws: Amdahl (single and multi-component), Gustafson, pipeline bubbles, ROI."""

from __future__ import annotations

import math

from apps.perfcalc.calc.core import InputError, Result, pct, sig
from apps.perfcalc.calc.registry import Param, register

FRACTION = Param(
    "fraction",
    "Affected fraction f",
    "fraction",
    "Share of run time the optimisation touches, e.g. 0.12 or 12%.",
    kind="fraction",
)
SPEEDUP = Param(
    "speedup", "Speed-up of that part k", "", "e.g. 3 for a kernel made 3× faster.", kind="factor"
)


def _amdahl_v(fraction, speedup):
    return 1 / ((1 - fraction) + fraction / speedup)


@register(
    name="amdahl",
    title="Amdahl's law",
    topic="scaling",
    summary="Overall speed-up = 1 / ((1 − f) + f/k); never more than 1/(1 − f).",
    params=[FRACTION, SPEEDUP],
    result_unit="×",
    vector=_amdahl_v,
    example={"fraction": 0.12, "speedup": 3},
)
def amdahl(*, fraction: float, speedup: float) -> Result:
    s = float(_amdahl_v(fraction, speedup))
    steps = [
        f"S = 1 / ((1 − {sig(fraction)}) + {sig(fraction)} / {sig(speedup)})",
        f"S = 1 / ({sig(1 - fraction)} + {sig(fraction / speedup)}) = 1 / {sig(1 / s)} = {sig(s)}×",
        f"end-to-end gain = {pct(s - 1)}",
    ]
    extras: dict[str, float] = {"gain": s - 1}
    if fraction < 1:
        ceiling = 1 / (1 - fraction)
        steps.append(f"ceiling as k → ∞: 1 / (1 − {sig(fraction)}) = {sig(ceiling)}×")
        extras["ceiling"] = ceiling
    return Result(
        "amdahl", s, "×", "Overall speed-up", "S = 1 / ((1 − f) + f/k)", tuple(steps), extras=extras
    )


@register(
    name="amdahl-multi",
    title="Multi-component Amdahl",
    topic="scaling",
    summary="Several parts sped up at once: S = 1 / Σ(fᵢ / kᵢ), with Σfᵢ = 1.",
    params=[
        Param(
            "fractions",
            "Fractions fᵢ",
            "fraction",
            "Shares of step time, adding up to 1, e.g. 0.45, 0.30, 0.15, 0.10.",
            kind="fractions",
        ),
        Param(
            "speedups",
            "Speed-ups kᵢ",
            "",
            "One per fraction (1 = unchanged), e.g. 1, 2, 1, 1.",
            kind="factors",
        ),
    ],
    result_unit="×",
    example={"fractions": [0.55, 0.45], "speedups": [1, 2]},
)
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
        "amdahl-multi",
        s,
        "×",
        "Overall speed-up",
        "S = 1 / Σ(fᵢ / kᵢ)",
        (
            f"new step time = {terms} = {sig(new_time)} of the old",
            f"S = 1 / {sig(new_time)} = {sig(s)}×",
            f"end-to-end gain = {pct(s - 1)}",
        ),
        extras={"new_time_fraction": new_time, "gain": s - 1},
    )


def _gustafson_v(scale, serial_fraction):
    return scale - serial_fraction * (scale - 1)


@register(
    name="gustafson",
    title="Gustafson's law",
    topic="scaling",
    summary="Scaled speed-up when the work grows with the machine: S = N − s·(N − 1).",
    params=[
        Param(
            "scale",
            "Processors N",
            "",
            "Processors (or the factor the machine grows by).",
            kind="factor",
        ),
        Param(
            "serial_fraction",
            "Serial fraction s",
            "fraction",
            "Share of the (scaled) run that stays serial.",
            kind="fraction",
        ),
    ],
    result_unit="×",
    vector=_gustafson_v,
    example={"scale": 64, "serial_fraction": 0.05},
)
def gustafson(*, scale: float, serial_fraction: float) -> Result:
    s = float(_gustafson_v(scale, serial_fraction))
    return Result(
        "gustafson",
        s,
        "×",
        "Scaled speed-up",
        "S = N − s·(N − 1)",
        (f"S = {sig(scale)} − {sig(serial_fraction)} × ({sig(scale)} − 1) = {sig(s)}×",),
    )


BUBBLE_CONVENTIONS = {
    "gpipe": ("(PP − 1) / (m + PP − 1)", "share of the whole schedule spent idle (GPipe)"),
    "megatron": ("(PP − 1) / m", "idle time relative to useful compute time (Megatron-LM)"),
    "course-lab": ("(PP − 1) / (PP · m)", "the performance-engineering lab's convention"),
}


BUBBLE_CONVENTION_NAMES = tuple(BUBBLE_CONVENTIONS)  # the API schema's enum


def _bubble(pp: float, m: float, convention: str) -> float:
    if convention == "gpipe":
        return (pp - 1) / (m + pp - 1)
    if convention == "megatron":
        return (pp - 1) / m
    return (pp - 1) / (pp * m)


@register(
    name="pipeline-bubble",
    title="Pipeline bubble",
    topic="scaling",
    summary="Idle share of a pipeline-parallel step, under a named convention.",
    params=[
        Param("stages", "Pipeline stages PP", "", "e.g. 8.", kind="int"),
        Param("microbatches", "Micro-batches m", "", "Per step, e.g. 4.", kind="int"),
        Param(
            "convention",
            "Convention",
            "",
            "gpipe (default): (PP−1)/(m+PP−1), share of the "
            "schedule. megatron: (PP−1)/m, relative to compute. course-lab: (PP−1)/(PP·m).",
            kind="choice",
            default="gpipe",
            choices=tuple(BUBBLE_CONVENTIONS),
        ),
    ],
    result_unit="fraction",
    vector=lambda stages, microbatches, convention: _bubble(stages, microbatches, convention),
    example={"stages": 8, "microbatches": 4, "convention": "gpipe"},
)
def pipeline_bubble(*, stages: int, microbatches: int, convention: str) -> Result:
    value = _bubble(stages, microbatches, convention)
    equation, meaning = BUBBLE_CONVENTIONS[convention]
    others = {name: _bubble(stages, microbatches, name) for name in BUBBLE_CONVENTIONS}
    substituted = {
        "gpipe": f"({stages} − 1) / ({microbatches} + {stages} − 1) = "
        f"{stages - 1}/{microbatches + stages - 1}",
        "megatron": f"({stages} − 1) / {microbatches} = {stages - 1}/{microbatches}",
        "course-lab": f"({stages} − 1) / ({stages} × {microbatches}) = "
        f"{stages - 1}/{stages * microbatches}",
    }[convention]
    return Result(
        "pipeline-bubble",
        value,
        "fraction",
        "Bubble",
        f"bubble = {equation}",
        (
            f"{convention}: {meaning}",
            f"bubble = {substituted} = {sig(value)} ({pct(value)})",
            "other conventions: "
            + ", ".join(f"{k} {sig(v)}" for k, v in others.items() if k != convention),
        ),
        convention=convention,
        extras={"conventions": others},
    )


@register(
    name="optimization-roi",
    title="Optimisation ROI",
    topic="scaling",
    summary="Gain per engineer-week: compare fixes by what they return for the effort.",
    params=[
        Param(
            "gain",
            "Gain",
            "",
            "What the fix buys, e.g. MFU points (8.2) or % speed-up.",
            kind="nonnegative",
        ),
        Param("engineer_weeks", "Effort", "", "Engineer-weeks to build it, e.g. 3."),
    ],
    result_unit="per engineer-week",
    vector=lambda gain, engineer_weeks: gain / engineer_weeks,
    example={"gain": 8.2, "engineer_weeks": 3},
)
def optimization_roi(*, gain: float, engineer_weeks: float) -> Result:
    roi = gain / engineer_weeks
    return Result(
        "optimization-roi",
        roi,
        "per engineer-week",
        "ROI",
        "ROI = gain / engineer-weeks",
        (f"ROI = {sig(gain)} / {sig(engineer_weeks)} weeks = {sig(roi)} per engineer-week",),
    )


def _strong_v(n_gpus, comm_fraction):
    return n_gpus / (1 + comm_fraction * (n_gpus - 1))


@register(
    name="strong-scaling",
    title="Strong scaling with communication",
    topic="scaling",
    summary="Fixed problem on N GPUs when a share c of the one-GPU time becomes communication that "
    "does not shrink: S = N / (1 + c·(N − 1)); efficiency S/N.",
    params=[
        Param("n_gpus", "GPUs N", "", "e.g. 64.", kind="int", maximum=10**7),
        Param(
            "comm_fraction",
            "Communication fraction c",
            "fraction",
            "Share of the single-GPU step time "
            "that is communication or other work that does not split, e.g. 0.02.",
            kind="fraction",
        ),
    ],
    result_unit="×",
    vector=_strong_v,
    example={"n_gpus": 64, "comm_fraction": 0.02},
)
def strong_scaling(*, n_gpus: int, comm_fraction: float) -> Result:
    s = float(_strong_v(n_gpus, comm_fraction))
    steps = [
        f"S = {n_gpus} / (1 + {sig(comm_fraction)} × ({n_gpus} − 1)) = {sig(s)}×",
        f"efficiency = S / N = {pct(s / n_gpus)}",
    ]
    extras: dict[str, float] = {"efficiency": s / n_gpus}
    if comm_fraction > 0:
        half = 1 + 1 / comm_fraction
        steps.append(
            f"efficiency falls to 50 % at N = 1 + 1/c = {sig(half)} GPUs; S never exceeds 1/c = "
            f"{sig(1 / comm_fraction)}×"
        )
        extras.update(half_efficiency_gpus=half, ceiling=1 / comm_fraction)
    return Result(
        "strong-scaling",
        s,
        "×",
        "Speed-up",
        "S = N / (1 + c·(N − 1))",
        tuple(steps),
        convention=(
            "Amdahl's law with the communication share as the part that does not parallelise"
        ),
        extras=extras,
    )


def _usl_v(n, sigma, kappa):
    return n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


@register(
    name="usl",
    title="Universal Scalability Law",
    topic="scaling",
    summary="Relative capacity C(N) = N / (1 + σ(N−1) + κN(N−1)): contention σ caps it, coherency "
    "κ makes it fall; peak at N* = √((1 − σ)/κ).",
    params=[
        Param("n", "Concurrency N", "", "GPUs, replicas or workers, e.g. 32.", kind="factor"),
        Param("sigma", "Contention σ", "fraction", "Serialised share, e.g. 0.05.", kind="fraction"),
        Param(
            "kappa", "Coherency κ", "", "Pairwise cross-talk cost, e.g. 0.001.", kind="nonnegative"
        ),
    ],
    result_unit="×",
    vector=_usl_v,
    example={"n": 32, "sigma": 0.05, "kappa": 0.001},
)
def usl(*, n: float, sigma: float, kappa: float) -> Result:
    c = float(_usl_v(n, sigma, kappa))
    steps = [
        f"C({sig(n)}) = {sig(n)} / (1 + {sig(sigma)} × {sig(n - 1)} + {sig(kappa)} × {sig(n)} × "
        f"{sig(n - 1)}) = {sig(c)}×"
    ]
    extras: dict[str, float] = {}
    verdict = None
    if kappa > 0 and sigma < 1:
        best = math.sqrt((1 - sigma) / kappa)
        peak = float(_usl_v(best, sigma, kappa))
        steps.append(
            f"N* = √((1 − {sig(sigma)}) / {sig(kappa)}) = {sig(best)}, where C = {sig(peak)}×"
        )
        extras.update(optimal_n=best, peak_capacity=peak)
        verdict = "past the peak: adding more lowers throughput" if n > best else None
    elif sigma > 0:
        steps.append(f"κ = 0: C rises towards 1/σ = {sig(1 / sigma)}× and never falls")
    return Result(
        "usl",
        c,
        "×",
        "Relative capacity",
        "C(N) = N / (1 + σ(N−1) + κN(N−1))",
        tuple(steps),
        classification=verdict,
        convention="Gunther's Universal Scalability Law",
        extras=extras,
    )
