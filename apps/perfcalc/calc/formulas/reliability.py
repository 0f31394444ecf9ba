"""Reliability: cluster MTBF and the Young–Daly checkpoint interval."""

from __future__ import annotations

import math

import numpy as np

from apps.perfcalc.calc.core import InputError, Result, fmt, pct, sig
from apps.perfcalc.calc.registry import Param, register


@register(
    name="young-daly",
    title="Checkpoint interval (Young–Daly)",
    topic="reliability",
    summary="Optimal time between checkpoints: √(2 · C · MTBF).",
    params=[
        Param(
            "checkpoint_cost_s",
            "Checkpoint cost C",
            "s",
            "Time to write one checkpoint, e.g. 2 min.",
        ),
        Param("mtbf_s", "Mean time between failures", "s", "Of the whole job's cluster, e.g. 8 h."),
    ],
    result_unit="s",
    vector=lambda checkpoint_cost_s, mtbf_s: (2 * checkpoint_cost_s * mtbf_s) ** 0.5,
    example={"checkpoint_cost_s": "2 min", "mtbf_s": "8 h"},
)
def young_daly(*, checkpoint_cost_s: float, mtbf_s: float) -> Result:
    t = math.sqrt(2 * checkpoint_cost_s * mtbf_s)
    note = (
        None
        if checkpoint_cost_s < mtbf_s / 10
        else "C is not small next to MTBF: the approximation is loose"
    )
    return Result(
        "young-daly",
        t,
        "s",
        "Checkpoint every",
        "T* = √(2 · C · MTBF)",
        (f"T* = √(2 × {fmt(checkpoint_cost_s, 's')} × {fmt(mtbf_s, 's')}) = {fmt(t, 's')}",),
        classification=note,
    )


@register(
    name="cluster-mtbf",
    title="Cluster MTBF",
    topic="reliability",
    summary="N independent parts each failing every M on average: the job fails every M / N.",
    params=[
        Param("component_mtbf_s", "MTBF of one part", "s", "e.g. 50,000 h for a GPU node."),
        Param("n_components", "Parts", "", "Parts whose failure stops the job.", kind="int"),
    ],
    result_unit="s",
    vector=lambda component_mtbf_s, n_components: component_mtbf_s / n_components,
    example={"component_mtbf_s": "50000 h", "n_components": 512},
)
def cluster_mtbf(*, component_mtbf_s: float, n_components: int) -> Result:
    t = component_mtbf_s / n_components
    return Result(
        "cluster-mtbf",
        t,
        "s",
        "Cluster MTBF",
        "MTBF_cluster = MTBF / N",
        (f"MTBF = {fmt(component_mtbf_s, 's')} / {n_components} = {fmt(t, 's')}",),
        convention="independent, exponentially distributed failures",
    )


CHECKPOINT_BYTES = {"bf16-adam": (2.0, 12.0), "fp32-adam": (4.0, 8.0), "weights-bf16": (2.0, 0.0)}
CHECKPOINT_RECIPES = tuple(CHECKPOINT_BYTES)


def _ckpt_v(parameters, recipe, write_bandwidth_bytes_per_s):
    w, opt = CHECKPOINT_BYTES[recipe]
    size = parameters * (w + opt)
    return size, {"write_time_s": size / write_bandwidth_bytes_per_s}


@register(
    name="checkpoint-size",
    title="Checkpoint size",
    topic="reliability",
    summary="Weights + optimizer state: 14 bytes per parameter for mixed-precision Adam (gradients "
    "are not saved).",
    params=[
        Param("parameters", "Parameters", "count", "e.g. 70.6B (all experts for MoE)."),
        Param(
            "recipe",
            "What is saved",
            "",
            "bf16-adam: 2 B bf16 weights + 12 B fp32 master, momentum and "
            "variance = 14 B. fp32-adam: 4 + 8 = 12 B. weights-bf16: 2 B (inference export).",
            kind="choice",
            default="bf16-adam",
            choices=tuple(CHECKPOINT_BYTES),
        ),
        Param(
            "write_bandwidth_bytes_per_s",
            "Write bandwidth",
            "B/s",
            "Aggregate storage write speed, e.g. 5 GB/s, for the write time.",
            default=5e9,
        ),
    ],
    result_unit="B",
    vector=_ckpt_v,
    example={"parameters": "70.6B", "recipe": "bf16-adam", "write_bandwidth_bytes_per_s": "5 GB/s"},
)
def checkpoint_size(
    *, parameters: float, recipe: str, write_bandwidth_bytes_per_s: float
) -> Result:
    w, opt = CHECKPOINT_BYTES[recipe]
    size, extra = _ckpt_v(parameters, recipe, write_bandwidth_bytes_per_s)
    t = float(extra["write_time_s"])
    return Result(
        "checkpoint-size",
        float(size),
        "B",
        "Checkpoint size",
        "size = P × (weight bytes + optimizer bytes)",
        (
            f"bytes per parameter = {sig(w)} (weights) + {sig(opt)} (optimizer state) = "
            f"{sig(w + opt)}",
            f"size = {sig(parameters)} × {sig(w + opt)} B = {fmt(float(size), 'B')}",
            f"write time at {fmt(write_bandwidth_bytes_per_s, 'B/s')} = {fmt(t, 's')}",
        ),
        convention="gradients and activations are not checkpointed",
        extras={"write_time_s": t},
    )


def _overhead_v(checkpoint_cost_s, interval_s, mtbf_s):
    return checkpoint_cost_s / interval_s + interval_s / (2 * mtbf_s), {
        "optimal_interval_s": (2 * checkpoint_cost_s * mtbf_s) ** 0.5,
        "optimal_overhead": (2 * checkpoint_cost_s / mtbf_s) ** 0.5,
    }


@register(
    name="checkpoint-overhead",
    title="Checkpoint overhead fraction",
    topic="reliability",
    summary="Share of time lost: writing (C / τ) plus recomputing work since the last checkpoint "
    "(τ / 2·MTBF).",
    params=[
        Param(
            "checkpoint_cost_s",
            "Write time C",
            "s",
            "Time one checkpoint stalls training, e.g. 2 min.",
        ),
        Param("interval_s", "Interval τ", "s", "Time between checkpoints, e.g. 1 h."),
        Param("mtbf_s", "MTBF", "s", "Of the whole job, e.g. 8 h."),
    ],
    result_unit="fraction",
    vector=_overhead_v,
    example={"checkpoint_cost_s": "2 min", "interval_s": "1 h", "mtbf_s": "8 h"},
)
def checkpoint_overhead(*, checkpoint_cost_s: float, interval_s: float, mtbf_s: float) -> Result:
    value, extra = _overhead_v(checkpoint_cost_s, interval_s, mtbf_s)
    best, best_over = float(extra["optimal_interval_s"]), float(extra["optimal_overhead"])
    return Result(
        "checkpoint-overhead",
        float(value),
        "fraction",
        "Time lost",
        "waste = C/τ + τ/(2·MTBF)",
        (
            f"writing: {fmt(checkpoint_cost_s, 's')} / {fmt(interval_s, 's')} = "
            f"{sig(checkpoint_cost_s / interval_s)}",
            f"rework after a failure (half an interval on average): {fmt(interval_s, 's')} / (2 × "
            f"{fmt(mtbf_s, 's')}) = {sig(interval_s / (2 * mtbf_s))}",
            f"waste = {sig(float(value))} ({sig(100 * float(value))} %)",
            f"the Young interval √(2·C·MTBF) = {fmt(best, 's')} would waste {sig(100 * best_over)} "
            "%",
        ),
        classification="more time lost than gained: checkpoint less often or faster"
        if value >= 1
        else None,
        convention="Young's first-order model: failures independent, restart time not counted",
        extras={"optimal_interval_s": best, "optimal_overhead": best_over},
    )


def _node_mtbf_v(gpu_mtbf_s, gpus, nic_mtbf_s, nics, psu_mtbf_s, psus, other_mtbf_s, others):
    rate = gpus / gpu_mtbf_s + nics / nic_mtbf_s + psus / psu_mtbf_s + others / other_mtbf_s
    return 1 / rate, {"failures_per_s": rate}


def _count(name: str, label: str, help: str, default: int) -> Param:
    return Param(name, label, "", help, kind="int", default=default, minimum=0, maximum=10_000)


@register(
    name="node-mtbf",
    title="Node MTBF from its parts",
    topic="reliability",
    summary="Failure rates add: 1/MTBF_node = n_gpu/MTBF_gpu + n_nic/MTBF_nic + n_psu/MTBF_psu + "
    "n_other/MTBF_other.",
    params=[
        Param("gpu_mtbf_s", "GPU MTBF", "s", "e.g. 50,000 h."),
        _count("gpus", "GPUs", "Per node.", 8),
        Param("nic_mtbf_s", "NIC MTBF", "s", "e.g. 100,000 h."),
        _count("nics", "NICs", "Per node.", 8),
        Param("psu_mtbf_s", "Power-supply MTBF", "s", "e.g. 100,000 h."),
        _count("psus", "Power supplies", "Per node.", 2),
        Param(
            "other_mtbf_s",
            "Other part MTBF",
            "s",
            "Host, memory, disks… e.g. 200,000 h.",
            default=3.6e9,
        ),
        _count("others", "Other parts", "How many (0 to leave out).", 0),
    ],
    result_unit="s",
    vector=_node_mtbf_v,
    example={"gpu_mtbf_s": "50000 h", "nic_mtbf_s": "100000 h", "psu_mtbf_s": "100000 h"},
)
def node_mtbf(
    *,
    gpu_mtbf_s: float,
    gpus: int,
    nic_mtbf_s: float,
    nics: int,
    psu_mtbf_s: float,
    psus: int,
    other_mtbf_s: float,
    others: int,
) -> Result:
    if gpus + nics + psus + others == 0:
        raise InputError("gpus", "count at least one part")
    t, extra = _node_mtbf_v(
        gpu_mtbf_s, gpus, nic_mtbf_s, nics, psu_mtbf_s, psus, other_mtbf_s, others
    )
    terms = [
        (gpus, gpu_mtbf_s, "GPU"),
        (nics, nic_mtbf_s, "NIC"),
        (psus, psu_mtbf_s, "PSU"),
        (others, other_mtbf_s, "other"),
    ]
    shown = " + ".join(f"{n}/{sig(m / 3600)} h" for n, m, _ in terms if n)
    worst = max((n / m, label) for n, m, label in terms if n)
    return Result(
        "node-mtbf",
        float(t),
        "s",
        "Node MTBF",
        "1/MTBF = Σ nᵢ / MTBFᵢ",
        (
            f"failure rate = {shown} = {sig(float(extra['failures_per_s']) * 3600)} per hour",
            f"MTBF = 1 / rate = {fmt(float(t), 's')}",
            f"largest share of failures: {worst[1]}s "
            f"({pct(worst[0] / float(extra['failures_per_s']))})",
        ),
        convention="independent parts with constant (exponential) failure rates; any part's "
        "failure stops the node",
        extras={"failures_per_hour": float(extra["failures_per_s"]) * 3600},
    )


@register(
    name="failure-probability",
    title="Chance of a failure during a job",
    topic="reliability",
    summary="P(at least one failure) = 1 − e^(−T / MTBF).",
    params=[
        Param("job_duration_s", "Job length T", "s", "e.g. 14 days."),
        Param("mtbf_s", "MTBF", "s", "Of the whole job's cluster, e.g. 50 h."),
    ],
    result_unit="fraction",
    vector=lambda job_duration_s, mtbf_s: 1 - np.exp(-job_duration_s / mtbf_s),
    example={"job_duration_s": "14 days", "mtbf_s": "50 h"},
)
def failure_probability(*, job_duration_s: float, mtbf_s: float) -> Result:
    p = 1 - math.exp(-job_duration_s / mtbf_s)
    return Result(
        "failure-probability",
        p,
        "fraction",
        "Chance of at least one failure",
        "P = 1 − e^(−T/MTBF)",
        (
            f"T / MTBF = {fmt(job_duration_s, 's')} / {fmt(mtbf_s, 's')} = "
            f"{sig(job_duration_s / mtbf_s)}",
            f"P = 1 − e^(−{sig(job_duration_s / mtbf_s)}) = {sig(p)}",
            f"expected failures = {sig(job_duration_s / mtbf_s)}",
        ),
        convention="exponential failures (constant rate)",
        extras={"expected_failures": job_duration_s / mtbf_s},
    )
