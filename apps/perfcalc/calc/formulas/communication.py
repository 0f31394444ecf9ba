"""Collective communication: ring and tree AllReduce."""

from __future__ import annotations

import numpy as np

from apps.perfcalc.calc.core import Result, fmt, sig
from apps.perfcalc.calc.registry import Param, register

MESSAGE = Param(
    "message_bytes", "Message size", "B", "Bytes each GPU reduces, e.g. 14 GB of gradients."
)
N_GPUS = Param(
    "n_gpus", "GPUs", "", "Participants in the collective.", kind="int", minimum=1, maximum=10**7
)
LINK = Param(
    "bandwidth_bytes_per_s",
    "Link bandwidth",
    "B/s",
    "Per-GPU link bandwidth in one direction, e.g. 50 GB/s (400 Gb/s NDR).",
)
LATENCY = Param(
    "latency_s",
    "Per-step latency α",
    "s",
    "Latency of each communication step (0 to ignore), e.g. 5 µs.",
    kind="nonnegative",
    default=0.0,
)
RING_CONVENTIONS = ("exact", "approx-2m-bw")


def _ring_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s, convention):
    exact = 2 * (n_gpus - 1) / n_gpus * message_bytes / bandwidth_bytes_per_s
    approx = 2 * message_bytes / bandwidth_bytes_per_s
    latency = 2 * (n_gpus - 1) * latency_s
    bw_term = exact if convention == "exact" else np.where(n_gpus > 1, approx, 0.0)
    return bw_term + latency, {"exact_s": exact + latency, "approx_s": approx + latency}


@register(
    name="ring-allreduce",
    title="Ring AllReduce time",
    topic="communication",
    summary="Reduce-scatter then all-gather around a ring: 2(N−1)/N · M/BW + 2(N−1)·α.",
    params=[
        MESSAGE,
        N_GPUS,
        LINK,
        LATENCY,
        Param(
            "convention",
            "Convention",
            "",
            "exact: 2(N−1)/N·M/BW. approx-2m-bw: the "
            "large-N limit 2·M/BW that back-of-envelope answers (and the MLSys·im quiz) use.",
            kind="choice",
            default="exact",
            choices=RING_CONVENTIONS,
        ),
    ],
    result_unit="s",
    vector=_ring_v,
    example={"message_bytes": "14 GB", "n_gpus": 64, "bandwidth_bytes_per_s": "50 GB/s"},
)
def ring_allreduce(
    *,
    message_bytes: float,
    n_gpus: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    convention: str,
) -> Result:
    t, extra = _ring_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s, convention)
    exact, approx = float(extra["exact_s"]), float(extra["approx_s"])
    factor = 2 * (n_gpus - 1) / n_gpus
    steps = [
        f"bandwidth term (exact) = 2 × ({n_gpus} − 1) / {n_gpus} × {fmt(message_bytes, 'B')} / "
        f"{fmt(bandwidth_bytes_per_s, 'B/s')} = {sig(factor)} × "
        f"{fmt(message_bytes / bandwidth_bytes_per_s, 's')}"
        f" = {fmt(exact - 2 * (n_gpus - 1) * latency_s, 's')}",
        f"large-N approximation = 2 × {fmt(message_bytes, 'B')} / "
        f"{fmt(bandwidth_bytes_per_s, 'B/s')}"
        f" = {fmt(2 * message_bytes / bandwidth_bytes_per_s, 's')}",
    ]
    if latency_s:
        steps.append(
            f"latency term = 2 × ({n_gpus} − 1) × {fmt(latency_s, 's')} = "
            f"{fmt(2 * (n_gpus - 1) * latency_s, 's')}"
        )
    steps.append(f"T ({convention}) = {fmt(float(t), 's')}")
    return Result(
        "ring-allreduce",
        float(t),
        "s",
        "Ring AllReduce time",
        "T = 2(N−1)/N · M/BW + 2(N−1)·α" if convention == "exact" else "T ≈ 2·M/BW + 2(N−1)·α",
        tuple(steps),
        convention=convention,
        extras={"exact_s": exact, "approx_s": approx},
    )


def _tree_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s):
    depth = np.ceil(np.log2(np.maximum(n_gpus, 1)))
    return 2 * depth * (latency_s + message_bytes / bandwidth_bytes_per_s)


@register(
    name="tree-allreduce",
    title="Tree AllReduce time",
    topic="communication",
    summary="Reduce up a binary tree, broadcast back down, whole message per hop (not pipelined).",
    params=[MESSAGE, N_GPUS, LINK, LATENCY],
    result_unit="s",
    vector=_tree_v,
    example={"message_bytes": "14 GB", "n_gpus": 64, "bandwidth_bytes_per_s": "50 GB/s"},
)
def tree_allreduce(
    *, message_bytes: float, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float
) -> Result:
    depth = int(np.ceil(np.log2(max(n_gpus, 1))))
    t = float(_tree_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s))
    return Result(
        "tree-allreduce",
        t,
        "s",
        "Tree AllReduce time",
        "T = 2·⌈log₂N⌉·(α + M/BW)",
        (
            f"tree depth = ⌈log₂ {n_gpus}⌉ = {depth}",
            f"T = 2 × {depth} × ({fmt(latency_s, 's') if latency_s else '0'} + "
            f"{fmt(message_bytes / bandwidth_bytes_per_s, 's')}) = {fmt(t, 's')}",
        ),
        convention="binary tree, not pipelined (NCCL's pipelined double tree approaches 2·M/BW)",
    )
