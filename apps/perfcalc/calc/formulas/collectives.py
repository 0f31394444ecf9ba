"""Collectives beyond the ring: all-to-all, the pipelined double binary tree, the two-level
(hierarchical) AllReduce of multi-node jobs, point-to-point sends, reduce-scatter, all-gather,
and the message size where ring and tree cross.

Bandwidths are per-direction link figures (NVLink 4: 450 GB/s each way per GPU; the course's
GCP network about 12.5 GB/s per GPU). α is the per-step latency; 0 ignores it.
"""

from __future__ import annotations

import numpy as np

from apps.perfcalc.calc.core import InputError, Result, fmt, sig
from apps.perfcalc.calc.formulas.communication import LATENCY, LINK, MESSAGE, N_GPUS
from apps.perfcalc.calc.registry import Param, register

EXAMPLE = {
    "message_bytes": "1 GB",
    "n_gpus": 8,
    "bandwidth_bytes_per_s": "450 GB/s",
    "latency_s": "5 us",
}


def _log2_ceil(n):
    return np.ceil(np.log2(np.maximum(n, 1)) - 1e-12)


def _one_pass_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s):
    """(N−1)/N · M/BW + (N−1)·α: all-to-all, reduce-scatter and all-gather share it."""
    return (n_gpus - 1) / n_gpus * message_bytes / bandwidth_bytes_per_s + (n_gpus - 1) * latency_s


def _one_pass(
    formula: str,
    label: str,
    what: str,
    message_bytes: float,
    n_gpus: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    convention: str,
) -> Result:
    t = float(_one_pass_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s))
    bw = (n_gpus - 1) / n_gpus * message_bytes / bandwidth_bytes_per_s
    steps = [
        what,
        f"bandwidth term = ({n_gpus} − 1) / {n_gpus} × {fmt(message_bytes, 'B')} / "
        f"{fmt(bandwidth_bytes_per_s, 'B/s')} = {fmt(bw, 's') if bw else '0 s'}",
    ]
    if latency_s:
        steps.append(
            f"latency term = ({n_gpus} − 1) × {fmt(latency_s, 's')} = "
            f"{fmt((n_gpus - 1) * latency_s, 's')}"
        )
    steps.append(f"T = {fmt(t, 's') if t else '0 s'}")
    return Result(
        formula,
        t,
        "s",
        label,
        "T = (N−1)/N · M/BW + (N−1)·α",
        tuple(steps),
        convention=convention,
        extras={"bandwidth_term_s": bw},
    )


@register(
    name="all-to-all",
    title="All-to-all time (MoE expert parallelism)",
    topic="collectives",
    summary="Every GPU sends a 1/N share of its M bytes to each other GPU: (N−1)/N · M/BW + "
    "(N−1)·α.",
    params=[
        Param(
            "message_bytes",
            "Bytes each GPU sends",
            "B",
            "All the GPU's outgoing tokens, "
            "e.g. tokens × hidden × 2 B × experts per token for an MoE dispatch.",
        ),
        N_GPUS,
        LINK,
        LATENCY,
    ],
    result_unit="s",
    vector=_one_pass_v,
    example=EXAMPLE,
)
def all_to_all(
    *, message_bytes: float, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float
) -> Result:
    return _one_pass(
        "all-to-all",
        "All-to-all time",
        f"each GPU keeps 1/{n_gpus} of its data and sends {fmt(message_bytes / n_gpus, 'B')} to "
        f"each of the other {n_gpus - 1}",
        message_bytes,
        n_gpus,
        bandwidth_bytes_per_s,
        latency_s,
        "pairwise exchange, one step per peer, each GPU's link the bottleneck (full bisection "
        "assumed)",
    )


@register(
    name="reduce-scatter",
    title="Reduce-scatter time (ZeRO / FSDP gradients)",
    topic="collectives",
    summary="Each GPU ends with the sum of one 1/N shard: (N−1)/N · M/BW + (N−1)·α on a ring.",
    params=[
        Param(
            "message_bytes",
            "Buffer size M",
            "B",
            "The full buffer each GPU starts with, e.g. 14 GB of bf16 gradients for 7B parameters.",
        ),
        N_GPUS,
        LINK,
        LATENCY,
    ],
    result_unit="s",
    vector=_one_pass_v,
    example={**EXAMPLE, "message_bytes": "14 GB"},
)
def reduce_scatter(
    *, message_bytes: float, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float
) -> Result:
    return _one_pass(
        "reduce-scatter",
        "Reduce-scatter time",
        f"N − 1 = {n_gpus - 1} ring steps, each moving a {fmt(message_bytes / n_gpus, 'B')} shard",
        message_bytes,
        n_gpus,
        bandwidth_bytes_per_s,
        latency_s,
        "ring algorithm; half of a ring AllReduce",
    )


@register(
    name="all-gather",
    title="All-gather time (ZeRO-3 / FSDP weights)",
    topic="collectives",
    summary="Each GPU collects every other GPU's shard: (N−1)/N · M/BW + (N−1)·α on a ring.",
    params=[
        Param(
            "message_bytes",
            "Gathered size M",
            "B",
            "The full buffer after the gather, e.g. 14 GB of bf16 weights for 7B parameters.",
        ),
        N_GPUS,
        LINK,
        LATENCY,
    ],
    result_unit="s",
    vector=_one_pass_v,
    example={**EXAMPLE, "message_bytes": "14 GB"},
)
def all_gather(
    *, message_bytes: float, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float
) -> Result:
    return _one_pass(
        "all-gather",
        "All-gather time",
        f"N − 1 = {n_gpus - 1} ring steps, each moving a {fmt(message_bytes / n_gpus, 'B')} shard",
        message_bytes,
        n_gpus,
        bandwidth_bytes_per_s,
        latency_s,
        "ring algorithm; the other half of a ring AllReduce",
    )


def _dbt_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s):
    depth = _log2_ceil(n_gpus)
    return np.where(
        n_gpus > 1, 2 * message_bytes / bandwidth_bytes_per_s + 2 * depth * latency_s, 0.0
    )


@register(
    name="double-tree-allreduce",
    title="Double binary tree AllReduce time",
    topic="collectives",
    summary="NCCL's pipelined double binary tree: 2·M/BW + 2·⌈log₂N⌉·α — ring bandwidth, log "
    "latency.",
    params=[MESSAGE, N_GPUS, LINK, LATENCY],
    result_unit="s",
    vector=_dbt_v,
    example=EXAMPLE,
)
def double_tree_allreduce(
    *, message_bytes: float, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float
) -> Result:
    depth = int(_log2_ceil(n_gpus))
    t = float(_dbt_v(message_bytes, n_gpus, bandwidth_bytes_per_s, latency_s))
    steps = (
        "two complementary binary trees each carry half the message; every GPU is an inner node "
        "in at most one, so it sends and receives about M per phase",
        f"reduce + broadcast, pipelined in chunks: 2 × {fmt(message_bytes, 'B')} / "
        f"{fmt(bandwidth_bytes_per_s, 'B/s')}"
        f" = {fmt(2 * message_bytes / bandwidth_bytes_per_s, 's')}"
        if n_gpus > 1
        else "one GPU: nothing to reduce",
        f"latency: 2 × ⌈log₂ {n_gpus}⌉ = {2 * depth} steps × "
        f"{fmt(latency_s, 's') if latency_s else '0'}",
        f"T = {fmt(t, 's') if t else '0 s'}",
    )
    return Result(
        "double-tree-allreduce",
        t,
        "s",
        "Double binary tree AllReduce",
        "T = 2·M/BW + 2·⌈log₂N⌉·α",
        steps,
        convention="pipelined double binary tree (Sanders et al. 2009; NCCL 2.4+), pipeline fill "
        "ignored; the non-pipelined tree is tree-allreduce",
        extras={"depth": depth},
    )


def _hier_v(
    message_bytes,
    nodes,
    gpus_per_node,
    intra_bandwidth_bytes_per_s,
    inter_bandwidth_bytes_per_s,
    intra_latency_s,
    inter_latency_s,
):
    g, k = gpus_per_node, nodes
    rs = (g - 1) / g * message_bytes / intra_bandwidth_bytes_per_s + (g - 1) * intra_latency_s
    ar = (
        2 * (k - 1) / k * (message_bytes / g) / inter_bandwidth_bytes_per_s
        + 2 * (k - 1) * inter_latency_s
    )
    return rs + ar + rs, {"reduce_scatter_s": rs, "inter_node_s": ar, "all_gather_s": rs}


@register(
    name="hierarchical-allreduce",
    title="Hierarchical (two-level) AllReduce time",
    topic="collectives",
    summary="Reduce-scatter inside each node over NVLink, AllReduce each 1/G shard across nodes "
    "over the network, all-gather inside the node.",
    params=[
        MESSAGE,
        Param(
            "nodes",
            "Nodes K",
            "",
            "Nodes in the job, e.g. 2 of the course's 8×H100 nodes.",
            kind="int",
            maximum=100_000,
        ),
        Param(
            "gpus_per_node",
            "GPUs per node G",
            "",
            "8 on the course's nodes.",
            kind="int",
            default=8,
            maximum=1024,
        ),
        Param(
            "intra_bandwidth_bytes_per_s",
            "Inside-node bandwidth",
            "B/s",
            "Per GPU, per direction: 450 GB/s for NVLink 4 (900 GB/s is both ways).",
        ),
        Param(
            "inter_bandwidth_bytes_per_s",
            "Between-node bandwidth",
            "B/s",
            "Per GPU, per direction: 12.5 GB/s on the course's GCP nodes, 50 GB/s on NDR400 "
            "InfiniBand.",
        ),
        Param(
            "intra_latency_s",
            "Inside-node latency α",
            "s",
            "Per step, e.g. 1 us (0 to ignore).",
            kind="nonnegative",
            default=0.0,
        ),
        Param(
            "inter_latency_s",
            "Between-node latency α",
            "s",
            "Per step, e.g. 10 us (0 to ignore).",
            kind="nonnegative",
            default=0.0,
        ),
    ],
    result_unit="s",
    vector=_hier_v,
    example={
        "message_bytes": "14 GB",
        "nodes": 2,
        "gpus_per_node": 8,
        "intra_bandwidth_bytes_per_s": "450 GB/s",
        "inter_bandwidth_bytes_per_s": "12.5 GB/s",
    },
)
def hierarchical_allreduce(
    *,
    message_bytes: float,
    nodes: int,
    gpus_per_node: int,
    intra_bandwidth_bytes_per_s: float,
    inter_bandwidth_bytes_per_s: float,
    intra_latency_s: float,
    inter_latency_s: float,
) -> Result:
    t, parts = _hier_v(
        message_bytes,
        nodes,
        gpus_per_node,
        intra_bandwidth_bytes_per_s,
        inter_bandwidth_bytes_per_s,
        intra_latency_s,
        inter_latency_s,
    )
    g, k = gpus_per_node, nodes
    rs, ar = float(parts["reduce_scatter_s"]), float(parts["inter_node_s"])
    shard = message_bytes / g
    steps = (
        f"1. reduce-scatter inside the node: ({g} − 1)/{g} × {fmt(message_bytes, 'B')} / "
        f"{fmt(intra_bandwidth_bytes_per_s, 'B/s')} + ({g} − 1)·α_in = "
        f"{fmt(rs, 's') if rs else '0 s'}",
        f"2. ring AllReduce of each GPU's {fmt(shard, 'B')} shard across {k} node(s): 2 × ({k} − "
        f"1)/{k} × {fmt(shard, 'B')} / {fmt(inter_bandwidth_bytes_per_s, 'B/s')} + 2({k} − "
        f"1)·α_out = {fmt(ar, 's') if ar else '0 s'}",
        f"3. all-gather inside the node: same as step 1 = {fmt(rs, 's') if rs else '0 s'}",
        f"T = {fmt(float(t), 's') if t else '0 s'}",
        f"a flat ring over all {g * k} GPUs at the network figure would take "
        f"{fmt(2 * (g * k - 1) / (g * k) * message_bytes / inter_bandwidth_bytes_per_s, 's')}",
    )
    return Result(
        "hierarchical-allreduce",
        float(t),
        "s",
        "Hierarchical AllReduce",
        "T = 2·[(G−1)/G · M/BW_in + (G−1)·α_in] + 2(K−1)/K · (M/G)/BW_out + 2(K−1)·α_out",
        steps,
        convention="every GPU has its own network path (rail-optimised), so the G shard AllReduces "
        "across nodes run side by side; with one node this is exactly the ring AllReduce. "
        "mlsysim 0.3.0 computes the same three phases (older MLSys·im versions added three "
        "AllReduces).",
        extras={k2: float(v) for k2, v in parts.items()},
    )


def _p2p_v(message_bytes, bandwidth_bytes_per_s, latency_s):
    return latency_s + message_bytes / bandwidth_bytes_per_s


@register(
    name="p2p-send",
    title="Point-to-point send (pipeline activations)",
    topic="collectives",
    summary="One message from one GPU to the next: α + M/BW, e.g. a micro-batch's activations "
    "between pipeline stages.",
    params=[
        Param(
            "message_bytes",
            "Message size",
            "B",
            "e.g. micro-batch × sequence × hidden × 2 B: 1 × 8192 × 8192 × 2 = 134 MB.",
        ),
        Param(
            "bandwidth_bytes_per_s",
            "Link bandwidth",
            "B/s",
            "Per direction, e.g. 12.5 GB/s between the course's nodes or 450 GB/s over NVLink.",
        ),
        LATENCY,
    ],
    result_unit="s",
    vector=_p2p_v,
    example={"message_bytes": "134 MB", "bandwidth_bytes_per_s": "12.5 GB/s", "latency_s": "10 us"},
)
def p2p_send(*, message_bytes: float, bandwidth_bytes_per_s: float, latency_s: float) -> Result:
    t = float(_p2p_v(message_bytes, bandwidth_bytes_per_s, latency_s))
    return Result(
        "p2p-send",
        t,
        "s",
        "Send time",
        "T = α + M/BW",
        (
            f"T = {fmt(latency_s, 's') if latency_s else '0'} + {fmt(message_bytes, 'B')} / "
            f"{fmt(bandwidth_bytes_per_s, 'B/s')} = {fmt(t, 's')}",
        ),
        convention="α–β model: one message over one link, no contention, not overlapped with "
        "compute",
    )


def _crossover_v(n_gpus, bandwidth_bytes_per_s, latency_s):
    gap = (n_gpus - 1) - _log2_ceil(n_gpus)
    return np.maximum(n_gpus * bandwidth_bytes_per_s * latency_s * gap, 0.0)


@register(
    name="ring-tree-crossover",
    title="Ring vs tree crossover message size",
    topic="collectives",
    summary="Below M* = N·BW·α·((N−1) − ⌈log₂N⌉) the double binary tree wins (latency); above it "
    "the ring.",
    params=[N_GPUS, LINK, Param("latency_s", "Per-step latency α", "s", "e.g. 5 us.")],
    result_unit="B",
    vector=_crossover_v,
    example={"n_gpus": 64, "bandwidth_bytes_per_s": "50 GB/s", "latency_s": "5 us"},
)
def ring_tree_crossover(*, n_gpus: int, bandwidth_bytes_per_s: float, latency_s: float) -> Result:
    if n_gpus < 2:
        raise InputError("n_gpus", "needs at least 2 GPUs to compare algorithms")
    depth = int(_log2_ceil(n_gpus))
    m = float(_crossover_v(n_gpus, bandwidth_bytes_per_s, latency_s))
    steps = [
        f"ring: 2({n_gpus}−1)/{n_gpus}·M/BW + 2·{n_gpus - 1}·α;  tree: 2·M/BW + 2·{depth}·α",
        "equal when 2·M/(N·BW) = 2·α·((N−1) − ⌈log₂N⌉)",
        f"M* = {n_gpus} × {fmt(bandwidth_bytes_per_s, 'B/s')} × {fmt(latency_s, 's')} × "
        f"({n_gpus - 1} − {depth}) = {fmt(m, 'B') if m else '0 B'}",
    ]
    verdict = (
        f"messages under {fmt(m, 'B')}: tree; over: ring"
        if m
        else "the ring is never slower at this size"
    )
    return Result(
        "ring-tree-crossover",
        m,
        "B",
        "Crossover message size",
        "M* = N · BW · α · ((N−1) − ⌈log₂N⌉)",
        tuple(steps),
        classification=verdict,
        convention="α–β model; ring = exact ring AllReduce, tree = pipelined double binary tree",
        extras={
            "tree_depth": depth,
            "ring_latency_steps": 2 * (n_gpus - 1),
            "tree_latency_steps": 2 * depth,
        },
    )


__all__ = ["sig"]
