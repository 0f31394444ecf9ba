"""Reliability: cluster MTBF and the Young–Daly checkpoint interval."""

from __future__ import annotations

import math

from apps.perfcalc.calc.core import Result, fmt, sig
from apps.perfcalc.calc.registry import Param, register


@register(
    name="young-daly", title="Checkpoint interval (Young–Daly)", topic="reliability",
    summary="Optimal time between checkpoints: √(2 · C · MTBF).",
    params=[Param("checkpoint_cost_s", "Checkpoint cost C", "s", "Time to write one checkpoint, e.g. 2 min."),
            Param("mtbf_s", "Mean time between failures", "s", "Of the whole job's cluster, e.g. 8 h.")],
    result_unit="s", vector=lambda checkpoint_cost_s, mtbf_s: (2 * checkpoint_cost_s * mtbf_s) ** 0.5,
    example={"checkpoint_cost_s": "2 min", "mtbf_s": "8 h"},
)  # fmt: skip
def young_daly(*, checkpoint_cost_s: float, mtbf_s: float) -> Result:
    t = math.sqrt(2 * checkpoint_cost_s * mtbf_s)
    note = (
        None
        if checkpoint_cost_s < mtbf_s / 10
        else "C is not small next to MTBF: the approximation is loose"
    )
    return Result(
        "young-daly", t, "s", "Checkpoint every", "T* = √(2 · C · MTBF)",
        (f"T* = √(2 × {fmt(checkpoint_cost_s, 's')} × {fmt(mtbf_s, 's')}) = {fmt(t, 's')}",),
        classification=note,
    )  # fmt: skip


@register(
    name="cluster-mtbf", title="Cluster MTBF", topic="reliability",
    summary="N independent parts each failing every M on average: the job fails every M / N.",
    params=[Param("component_mtbf_s", "MTBF of one part", "s", "e.g. 50,000 h for a GPU node."),
            Param("n_components", "Parts", "", "Parts whose failure stops the job.", kind="int")],
    result_unit="s", vector=lambda component_mtbf_s, n_components: component_mtbf_s / n_components,
    example={"component_mtbf_s": "50000 h", "n_components": 512},
)  # fmt: skip
def cluster_mtbf(*, component_mtbf_s: float, n_components: int) -> Result:
    t = component_mtbf_s / n_components
    return Result(
        "cluster-mtbf", t, "s", "Cluster MTBF", "MTBF_cluster = MTBF / N",
        (f"MTBF = {fmt(component_mtbf_s, 's')} / {n_components} = {fmt(t, 's')}",),
        convention="independent, exponentially distributed failures",
    )  # fmt: skip


__all__ = ["cluster_mtbf", "sig", "young_daly"]
