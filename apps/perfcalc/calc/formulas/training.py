"""Training: FLOPs (6·P·D), the Iron Law of training time, MFU and effective FLOP/s."""

from __future__ import annotations

from apps.perfcalc.calc.core import Result, cnt, fmt, pct, sig
from apps.perfcalc.calc.formulas.common import PARAMETERS, PEAK
from apps.perfcalc.calc.registry import Param, register

TOKENS = Param("tokens", "Tokens", "count", "Training tokens, e.g. 1.4T or 2e12.")
N_GPUS = Param("n_gpus", "GPUs", "", "GPUs working together.", kind="int")
MFU = Param(
    "mfu", "MFU", "fraction", "Model FLOPs utilisation, e.g. 0.35 or 35%.", kind="fraction_pos"
)


@register(
    name="training-flops",
    title="Training FLOPs",
    topic="training",
    summary="≈ 6 × parameters × tokens (2 forward + 4 backward per parameter per token).",
    params=[PARAMETERS, TOKENS],
    result_unit="FLOP",
    vector=lambda parameters, tokens: 6 * parameters * tokens,
    example={"parameters": "70B", "tokens": "1.4T"},
    model_fields={"parameters": "active_parameters"},
)
def training_flops(*, parameters: float, tokens: float) -> Result:
    total = 6 * parameters * tokens
    return Result(
        "training-flops",
        total,
        "FLOP",
        "Training FLOPs",
        "C ≈ 6 · P · D",
        (f"C = 6 × {sig(parameters)} × {sig(tokens)} = {sig(total)} FLOP",),
        convention="dense transformer; attention FLOPs over the context not counted",
    )


@register(
    name="inference-flops",
    title="Inference FLOPs",
    topic="training",
    summary="≈ 2 × parameters FLOPs per generated token.",
    params=[PARAMETERS, Param("tokens", "Tokens", "count", "Tokens generated.", default=1.0)],
    result_unit="FLOP",
    vector=lambda parameters, tokens: 2 * parameters * tokens,
    example={"parameters": "16B", "tokens": 1},
    model_fields={"parameters": "active_parameters"},
)
def inference_flops(*, parameters: float, tokens: float) -> Result:
    total = 2 * parameters * tokens
    return Result(
        "inference-flops",
        total,
        "FLOP",
        "Inference FLOPs",
        "C ≈ 2 · P per token",
        (f"C = 2 × {sig(parameters)} × {sig(tokens)} = {fmt(total, 'FLOP')}",),
    )


def _iron_v(total_flops, n_gpus, peak_flops_per_s, mfu, scaling_efficiency, goodput):
    return total_flops / (n_gpus * peak_flops_per_s * mfu * scaling_efficiency * goodput)


@register(
    name="iron-law-time",
    title="Training time (Iron Law)",
    topic="training",
    summary="Time = FLOPs / (N · peak · MFU · η_scaling · goodput).",
    params=[
        Param("total_flops", "Total FLOPs", "FLOP", "e.g. 6 × P × D."),
        N_GPUS,
        PEAK,
        MFU,
        Param(
            "scaling_efficiency",
            "Scaling efficiency η",
            "fraction",
            "Share of linear scaling kept at N GPUs (1 = perfect).",
            kind="fraction_pos",
            default=1.0,
        ),
        Param(
            "goodput",
            "Goodput",
            "fraction",
            "Share of time doing useful work (failures, restarts and checkpoints excluded).",
            kind="fraction_pos",
            default=1.0,
        ),
    ],
    result_unit="s",
    uses_gpu=True,
    vector=_iron_v,
    example={
        "total_flops": "5.88e23",
        "n_gpus": 512,
        "peak_flops_per_s": "989.5 TFLOPS",
        "mfu": "35%",
    },
)
def iron_law_time(
    *,
    total_flops: float,
    n_gpus: int,
    peak_flops_per_s: float,
    mfu: float,
    scaling_efficiency: float,
    goodput: float,
) -> Result:
    rate = n_gpus * peak_flops_per_s * mfu * scaling_efficiency * goodput
    t = total_flops / rate
    return Result(
        "iron-law-time",
        t,
        "s",
        "Training time",
        "T = C / (N · peak · MFU · η · goodput)",
        (
            f"useful rate = {n_gpus} × {fmt(peak_flops_per_s, 'FLOP/s')} × {sig(mfu)} × "
            f"{sig(scaling_efficiency)} × {sig(goodput)} = {fmt(rate, 'FLOP/s')}",
            f"T = {sig(total_flops)} FLOP / {fmt(rate, 'FLOP/s')} = {fmt(t, 's')}",
        ),
        extras={"effective_flops_per_s": rate, "days": t / 86400},
    )


def _mfu_v(tokens_per_s, parameters, n_gpus, peak_flops_per_s):
    return 6 * parameters * tokens_per_s / (n_gpus * peak_flops_per_s)


@register(
    name="mfu",
    title="MFU from measured throughput",
    topic="training",
    summary="MFU = 6 · P · tokens/s / (N · peak): the share of peak spent on the model's FLOPs.",
    params=[
        Param(
            "tokens_per_s",
            "Throughput",
            "tokens/s",
            "Measured training tokens per second, all GPUs.",
        ),
        PARAMETERS,
        N_GPUS,
        PEAK,
    ],
    result_unit="fraction",
    uses_gpu=True,
    vector=_mfu_v,
    example={
        "tokens_per_s": 3000,
        "parameters": "7B",
        "n_gpus": 8,
        "peak_flops_per_s": "989.5 TFLOPS",
    },
    model_fields={"parameters": "active_parameters"},
)
def mfu(*, tokens_per_s: float, parameters: float, n_gpus: int, peak_flops_per_s: float) -> Result:
    achieved = 6 * parameters * tokens_per_s
    value = achieved / (n_gpus * peak_flops_per_s)
    verdict = "above 100 %: impossible, check the inputs" if value > 1 else None
    return Result(
        "mfu",
        value,
        "fraction",
        "MFU",
        "MFU = 6 · P · throughput / (N · peak)",
        (
            f"model FLOP/s = 6 × {sig(parameters)} × {sig(tokens_per_s)} tokens/s = "
            f"{fmt(achieved, 'FLOP/s')}",
            f"peak = {n_gpus} × {fmt(peak_flops_per_s, 'FLOP/s')} = "
            f"{fmt(n_gpus * peak_flops_per_s, 'FLOP/s')}",
            f"MFU = {fmt(achieved, 'FLOP/s')} / {fmt(n_gpus * peak_flops_per_s, 'FLOP/s')} = "
            f"{pct(value)}",
        ),
        classification=verdict,
        extras={"model_flops_per_s": achieved},
    )


@register(
    name="effective-flops",
    title="Effective FLOP/s per GPU",
    topic="training",
    summary="What a GPU delivers to the model: MFU × peak.",
    params=[PEAK, MFU],
    result_unit="FLOP/s",
    uses_gpu=True,
    vector=lambda peak_flops_per_s, mfu: peak_flops_per_s * mfu,
    example={"peak_flops_per_s": "1979 TFLOPS", "mfu": "35%"},
)
def effective_flops(*, peak_flops_per_s: float, mfu: float) -> Result:
    value = peak_flops_per_s * mfu
    return Result(
        "effective-flops",
        value,
        "FLOP/s",
        "Effective FLOP/s",
        "effective = MFU × peak",
        (
            f"effective = {pct(mfu)} × {fmt(peak_flops_per_s, 'FLOP/s')} = {fmt(value, 'FLOP/s')}",
            f"the other {pct(1 - mfu)} of peak goes to communication, bubbles, memory stalls and "
            "idle time",
        ),
    )


def _chinchilla_v(flop_budget, tokens_per_parameter):
    n = (flop_budget / (6 * tokens_per_parameter)) ** 0.5
    return n, {"tokens": tokens_per_parameter * n}


@register(
    name="compute-optimal",
    title="Compute-optimal model and data (Chinchilla)",
    topic="training",
    summary="For a FLOP budget C = 6·N·D with D = r·N tokens: N = √(C / 6r), D = r·N (r ≈ 20 "
    "tokens per parameter).",
    params=[
        Param("flop_budget", "FLOP budget C", "FLOP", "Training compute, e.g. 5.88e23."),
        Param(
            "tokens_per_parameter",
            "Tokens per parameter r",
            "",
            "Chinchilla's rule of thumb is 20.",
            default=20.0,
        ),
    ],
    result_unit="parameters",
    vector=_chinchilla_v,
    example={"flop_budget": "5.88e23", "tokens_per_parameter": 20},
)
def compute_optimal(*, flop_budget: float, tokens_per_parameter: float) -> Result:
    n, extra = _chinchilla_v(flop_budget, tokens_per_parameter)
    d = float(extra["tokens"])
    return Result(
        "compute-optimal",
        float(n),
        "parameters",
        "Compute-optimal parameters",
        "N = √(C / (6·r)), D = r·N",
        (
            f"N = √({sig(flop_budget)} / (6 × {sig(tokens_per_parameter)})) = {cnt(float(n))} "
            "parameters",
            f"D = {sig(tokens_per_parameter)} × {cnt(float(n))} = {cnt(d)} tokens",
            f"check: 6 × N × D = {sig(6 * float(n) * d)} FLOP",
        ),
        convention=f"Hoffmann et al. 2022 (Chinchilla), fixed ratio of {sig(tokens_per_parameter)} "
        "tokens per parameter",
        extras={"tokens": d},
    )
