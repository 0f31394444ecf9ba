"""Parallel layouts: the interleaved pipeline bubble, model-state memory per GPU under
data/tensor/pipeline parallelism and ZeRO, activation memory per layer (Korthikanti et al.),
and a training step's time split into compute, communication and bubble."""

from __future__ import annotations

from typing import Any

import numpy as np

from apps.perfcalc.calc.core import InputError, Result, cnt, fmt, pct, sig
from apps.perfcalc.calc.formulas.common import PEAK
from apps.perfcalc.calc.formulas.scaling import BUBBLE_CONVENTIONS
from apps.perfcalc.calc.registry import Param, register


def _ibubble(pp, m, v, convention):
    if convention == "gpipe":
        return (pp - 1) / (v * m + pp - 1)
    if convention == "megatron":
        return (pp - 1) / (v * m)
    return (pp - 1) / (pp * v * m)


@register(
    name="interleaved-bubble",
    title="Interleaved pipeline bubble",
    topic="parallelism",
    summary="Each GPU holds v model chunks (virtual stages): the bubble shrinks v-fold, under the "
    "same named conventions as the plain bubble.",
    params=[
        Param("stages", "Pipeline stages PP", "", "GPUs in the pipeline, e.g. 8.", kind="int"),
        Param("microbatches", "Micro-batches m", "", "Per step, e.g. 16.", kind="int"),
        Param(
            "virtual_stages",
            "Virtual stages v",
            "",
            "Model chunks per GPU (1 = no interleaving), e.g. 2.",
            kind="int",
            maximum=1024,
        ),
        Param(
            "convention",
            "Convention",
            "",
            "gpipe (default): (PP−1)/(v·m+PP−1), share of the "
            "schedule. megatron: (PP−1)/(v·m), relative to compute. course-lab: (PP−1)/(PP·v·m).",
            kind="choice",
            default="gpipe",
            choices=tuple(BUBBLE_CONVENTIONS),
        ),
    ],
    result_unit="fraction",
    vector=lambda stages, microbatches, virtual_stages, convention: _ibubble(
        stages, microbatches, virtual_stages, convention
    ),
    example={"stages": 8, "microbatches": 16, "virtual_stages": 2, "convention": "gpipe"},
)
def interleaved_bubble(
    *, stages: int, microbatches: int, virtual_stages: int, convention: str
) -> Result:
    value = float(_ibubble(stages, microbatches, virtual_stages, convention))
    plain = float(_ibubble(stages, microbatches, 1, convention))
    equation = {
        "gpipe": "(PP − 1) / (v·m + PP − 1)",
        "megatron": "(PP − 1) / (v·m)",
        "course-lab": "(PP − 1) / (PP·v·m)",
    }[convention]
    note = (
        f"Megatron-LM's interleaved schedule needs m to be a multiple of PP ({microbatches} is not)"
        if virtual_stages > 1 and microbatches % stages
        else None
    )
    filled = equation.replace("PP", str(stages)).replace("v·m", f"{virtual_stages}·{microbatches}")
    return Result(
        "interleaved-bubble",
        value,
        "fraction",
        "Bubble",
        f"bubble = {equation}",
        (
            f"{convention}: {BUBBLE_CONVENTIONS[convention][1]}; "
            f"v = {virtual_stages} chunks per GPU",
            f"bubble = {filled} = {sig(value)} ({pct(value)})",
            f"without interleaving (v = 1): {sig(plain)}; "
            "interleaving costs v× more pipeline sends",
        ),
        classification=note,
        convention=convention,
        extras={"without_interleaving": plain},
    )


# bytes per parameter: weights, gradients, optimizer state (K in the ZeRO paper)
STATE_BYTES = {"bf16-adam": (2.0, 2.0, 12.0), "fp32-adam": (4.0, 4.0, 8.0)}
RECIPES = tuple(STATE_BYTES)
ZERO_STAGES = ("0", "1", "2", "3")


def _sharded(parameters, tp, pp, dp, zero, recipe):
    w, g, k = STATE_BYTES[recipe]
    z = int(zero)
    per = parameters / (tp * pp)
    weights = w * per / (dp if z >= 3 else 1)
    grads = g * per / (dp if z >= 2 else 1)
    opt = k * per / (dp if z >= 1 else 1)
    return weights + grads + opt, {
        "weights_bytes": weights,
        "gradients_bytes": grads,
        "optimizer_bytes": opt,
    }


MODEL_STATE_PARAMS = [
    Param("parameters", "Parameters", "count", "Model parameters (all experts for MoE), e.g. 70B."),
    Param(
        "tp",
        "Tensor-parallel TP",
        "",
        "GPUs splitting each layer (1 = none).",
        kind="int",
        default=1,
        maximum=4096,
    ),
    Param(
        "pp",
        "Pipeline-parallel PP",
        "",
        "Pipeline stages (1 = none).",
        kind="int",
        default=1,
        maximum=4096,
    ),
    Param(
        "dp",
        "Data-parallel DP",
        "",
        "Model replicas (1 = none).",
        kind="int",
        default=1,
        maximum=10**6,
    ),
    Param(
        "zero_stage",
        "ZeRO stage",
        "",
        "0 none; 1 shards optimizer state; 2 also gradients; 3 also weights "
        "(FSDP full sharding) — each across the DP replicas.",
        kind="choice",
        default="0",
        choices=ZERO_STAGES,
    ),
    Param(
        "recipe",
        "Training recipe",
        "",
        "bf16-adam: 2 B weights + 2 B gradients + 12 B fp32 master, momentum "
        "and variance (K = 12 in the ZeRO paper). fp32-adam: 4 + 4 + 8.",
        kind="choice",
        default="bf16-adam",
        choices=tuple(STATE_BYTES),
    ),
]


@register(
    name="sharded-memory",
    title="Model-state memory per GPU (DP/TP/PP/ZeRO)",
    topic="parallelism",
    summary="Weights, gradients and Adam state per GPU: ÷ TP·PP always; ZeRO-1/2/3 also ÷ DP for "
    "the optimizer, then gradients, then weights.",
    params=[
        *MODEL_STATE_PARAMS,
        Param(
            "gpu_memory_bytes",
            "Memory per GPU",
            "B",
            "To say whether it fits, e.g. 80 GB (or give gpu); 0 to skip.",
            kind="nonnegative",
            default=0.0,
        ),
    ],
    result_unit="B",
    uses_gpu=True,
    vector=lambda parameters, tp, pp, dp, zero_stage, recipe, gpu_memory_bytes: _sharded(
        parameters, tp, pp, dp, zero_stage, recipe
    ),
    example={"parameters": "7.5B", "dp": 64, "zero_stage": "1"},
)
def sharded_memory(
    *,
    parameters: float,
    tp: int,
    pp: int,
    dp: int,
    zero_stage: str,
    recipe: str,
    gpu_memory_bytes: float,
) -> Result:
    total, parts = _sharded(parameters, tp, pp, dp, zero_stage, recipe)
    w, g, k = STATE_BYTES[recipe]
    z = int(zero_stage)
    per = parameters / (tp * pp)

    def share(name: str, b: float, sharded: bool) -> str:
        return (
            f"{name} {sig(b)} B × {cnt(per)}"
            + (f" / {dp}" if sharded and dp > 1 else "")
            + f" = {fmt(parts[name + '_bytes'], 'B')}"
        )

    steps = [
        f"parameters per GPU before ZeRO = {cnt(parameters)} / (TP {tp} × PP {pp}) = {cnt(per)}",
        share("weights", w, z >= 3),
        share("gradients", g, z >= 2),
        share("optimizer", k, z >= 1),
        f"total = {fmt(total, 'B')} per GPU (activations, buffers and fragmentation not counted)",
    ]
    verdict = None
    if gpu_memory_bytes:
        spare = gpu_memory_bytes - total
        verdict = (
            f"fits in {fmt(gpu_memory_bytes, 'B')} with {fmt(spare, 'B')} left for activations"
            if spare >= 0
            else f"does not fit in {fmt(gpu_memory_bytes, 'B')}: {fmt(-spare, 'B')} over"
        )
    return Result(
        "sharded-memory",
        float(total),
        "B",
        "Model state per GPU",
        "M = P/(TP·PP) · (w/[DP if ZeRO-3] + g/[DP if ZeRO≥2] + K/[DP if ZeRO≥1])",
        tuple(steps),
        classification=verdict,
        convention=f"ZeRO paper (Rajbhandari et al. 2020) accounting, {recipe}: {sig(w)} + "
        f"{sig(g)} + {sig(k)} bytes per parameter",
        extras={k2: float(v) for k2, v in parts.items()},
    )


RECOMPUTE = ("none", "selective", "full")


def _act_per_layer(s, b, h, a, t, sp, recompute):
    sbh = s * b * h
    attention = 5 * a * s / h
    if recompute == "full":
        return 2 * sbh / (t if sp else 1)
    if sp:
        return sbh * (34 / t + (0 if recompute == "selective" else attention / t))
    return sbh * (10 + 24 / t + (0 if recompute == "selective" else attention / t))


def _act_v(
    sequence_length, micro_batch, hidden_size, heads, layers, tp, sequence_parallel, recompute
):
    per = _act_per_layer(
        sequence_length, micro_batch, hidden_size, heads, tp, sequence_parallel, recompute
    )
    return layers * per, {"per_layer_bytes": per}


@register(
    name="activation-memory",
    title="Activation memory (Korthikanti et al.)",
    topic="parallelism",
    summary="Bytes a layer keeps for the backward pass: sbh(34 + 5as/h) in 16-bit, cut by tensor "
    "and sequence parallelism and by selective or full recomputation.",
    params=[
        Param(
            "sequence_length",
            "Sequence length s",
            "",
            "Tokens per sequence, e.g. 8192.",
            kind="int",
        ),
        Param(
            "micro_batch",
            "Micro-batch b",
            "",
            "Sequences per micro-batch, e.g. 1.",
            kind="int",
            default=1,
        ),
        Param("hidden_size", "Hidden size h", "", "e.g. 8192 (Llama 3 70B).", kind="int"),
        Param("heads", "Attention heads a", "", "e.g. 64.", kind="int"),
        Param(
            "layers",
            "Layers",
            "",
            "Layers on this GPU (1 = per layer; a whole model's layers / PP).",
            kind="int",
            default=1,
        ),
        Param("tp", "Tensor-parallel t", "", "1 = none.", kind="int", default=1, maximum=4096),
        Param(
            "sequence_parallel",
            "Sequence parallelism",
            "",
            "Shard the layer-norm and dropout "
            "activations along the sequence too (needs t > 1 to matter).",
            kind="bool",
            default=True,
        ),
        Param(
            "recompute",
            "Recomputation",
            "",
            "none; selective (recompute attention's softmax and "
            "dropout: drops the 5as/h term); full (keep only each layer's input, 2sbh).",
            kind="choice",
            default="selective",
            choices=RECOMPUTE,
        ),
    ],
    result_unit="B",
    vector=_act_v,
    example={
        "sequence_length": 2048,
        "micro_batch": 1,
        "hidden_size": 12288,
        "heads": 96,
        "tp": 8,
        "recompute": "none",
    },
)
def activation_memory(
    *,
    sequence_length: int,
    micro_batch: int,
    hidden_size: int,
    heads: int,
    layers: int,
    tp: int,
    sequence_parallel: bool,
    recompute: str,
) -> Result:
    total, extra = _act_v(
        sequence_length, micro_batch, hidden_size, heads, layers, tp, sequence_parallel, recompute
    )
    per = float(extra["per_layer_bytes"])
    sbh = sequence_length * micro_batch * hidden_size
    attention = 5 * heads * sequence_length / hidden_size
    terms = {
        (
            "none",
            False,
        ): f"sbh·(10 + 24/t + 5as/(h·t)) = {sig(sbh)} × (10 + {sig(24 / tp)} + "
        f"{sig(attention / tp)})",
        (
            "none",
            True,
        ): f"sbh·(34/t + 5as/(h·t)) = {sig(sbh)} × ({sig(34 / tp)} + {sig(attention / tp)})",
        ("selective", False): f"sbh·(10 + 24/t) = {sig(sbh)} × {sig(10 + 24 / tp)}",
        ("selective", True): f"sbh·34/t = {sig(sbh)} × {sig(34 / tp)}",
        ("full", False): f"2·sbh = 2 × {sig(sbh)}",
        ("full", True): f"2·sbh/t = 2 × {sig(sbh)} / {tp}",
    }[(recompute, bool(sequence_parallel))]
    none = _act_per_layer(
        sequence_length, micro_batch, hidden_size, heads, tp, sequence_parallel, "none"
    )
    return Result(
        "activation-memory",
        float(total),
        "B",
        "Activation memory",
        "per layer = sbh·(34 + 5as/h) without parallelism or recomputation",
        (
            f"s = {sequence_length}, b = {micro_batch}, h = {hidden_size}, a = {heads}, t = {tp}, "
            f"sequence parallel {'on' if sequence_parallel else 'off'}, recompute {recompute}",
            f"per layer = {terms} = {fmt(per, 'B')}",
            f"× {layers} layer(s) = {fmt(float(total), 'B')}",
            f"without recomputation: {fmt(none, 'B')} per layer",
        ),
        convention="Korthikanti et al. 2022, Table 2 (16-bit activations, 1-byte dropout masks), "
        "with the attention term and the t split, as mlsysim 0.3.0 computes it (older "
        "MLSys·im versions used a simpler 34/10/2·sbh)",
        extras={"per_layer_bytes": per, "no_recompute_per_layer_bytes": float(none)},
    )


# ------------------------------------------------------------------ training step time


def _ring(m, n, bw, alpha):
    return np.where(n > 1, 2 * (n - 1) / n * m / bw + 2 * (n - 1) * alpha, 0.0)


def step_parts(
    *,
    active_parameters: Any,
    parameters: Any,
    layers: Any,
    hidden_size: Any,
    sequence_length: Any,
    global_batch: Any,
    micro_batch: Any,
    tp: Any,
    pp: Any,
    dp: Any,
    gpus_per_node: Any,
    peak_flops_per_s: Any,
    kernel_efficiency: Any,
    intra_bandwidth_bytes_per_s: Any,
    inter_bandwidth_bytes_per_s: Any,
    intra_latency_s: Any,
    inter_latency_s: Any,
) -> dict[str, Any]:
    """A step's seconds by part (numpy-friendly). Ranks are ordered TP, then DP, then PP
    (Megatron-LM's default): a TP group stays inside a node when TP ≤ G; the DP group spans
    TP·DP consecutive ranks; pipeline sends cross the network once the job spans nodes."""
    n = tp * pp * dp
    g = gpus_per_node
    tokens = global_batch * sequence_length
    m = global_batch / (dp * micro_batch)
    compute = 6 * active_parameters * tokens / n / (peak_flops_per_s * kernel_efficiency)
    bubble = (pp - 1) / m * compute
    act = micro_batch * sequence_length * hidden_size * 2.0  # one micro-batch's bf16 activations
    tp_bw = np.where(tp <= g, intra_bandwidth_bytes_per_s, inter_bandwidth_bytes_per_s)
    tp_alpha = np.where(tp <= g, intra_latency_s, inter_latency_s)
    tp_comm = 4 * (layers / pp) * m * _ring(act, tp, tp_bw, tp_alpha)
    spans = n > g
    pp_bw = np.where(spans, inter_bandwidth_bytes_per_s, intra_bandwidth_bytes_per_s)
    pp_alpha = np.where(spans, inter_latency_s, intra_latency_s)
    pp_comm = np.where(pp > 1, 2 * m * (pp_alpha + act / pp_bw), 0.0)
    grads = 2.0 * parameters / (tp * pp)
    local = np.maximum(
        np.minimum(dp, np.maximum(g // np.minimum(tp, g), 1)), 1
    )  # DP members per node
    across = np.maximum(dp / local, 1)
    rs = (local - 1) / local * grads / intra_bandwidth_bytes_per_s + (local - 1) * intra_latency_s
    ar = (
        2 * (across - 1) / across * (grads / local) / inter_bandwidth_bytes_per_s
        + 2 * (across - 1) * inter_latency_s
    )
    dp_comm = np.where(dp > 1, 2 * rs + ar, 0.0)
    total = compute + bubble + tp_comm + pp_comm + dp_comm
    mfu = 6 * active_parameters * tokens / (n * peak_flops_per_s * total)
    return {
        "compute_s": compute,
        "tp_comm_s": tp_comm,
        "pp_comm_s": pp_comm,
        "dp_comm_s": dp_comm,
        "bubble_s": bubble,
        "total_s": total,
        "mfu": mfu,
        "microbatches": m,
        "tokens_per_s": tokens / total,
        "gpus": n,
    }


STEP_PARAMS = [
    Param(
        "active_parameters",
        "Active parameters",
        "count",
        "Parameters each token goes through (all of them "
        "for a dense model; 12.9B for Mixtral 8×7B). Or give model.",
    ),
    Param(
        "parameters",
        "Parameters",
        "count",
        "All parameters (their gradients are averaged across DP).",
    ),
    Param("layers", "Layers", "", "e.g. 80.", kind="int"),
    Param("hidden_size", "Hidden size", "", "e.g. 8192.", kind="int"),
    Param(
        "sequence_length",
        "Sequence length",
        "",
        "Tokens per sequence, e.g. 4096.",
        kind="int",
        default=4096,
    ),
    Param(
        "global_batch",
        "Global batch",
        "",
        "Sequences per optimizer step, e.g. 256.",
        kind="int",
        default=256,
    ),
    Param(
        "micro_batch",
        "Micro-batch",
        "",
        "Sequences per micro-batch, e.g. 1.",
        kind="int",
        default=1,
    ),
    Param("tp", "TP", "", "Tensor-parallel degree.", kind="int", default=1, maximum=4096),
    Param("pp", "PP", "", "Pipeline stages.", kind="int", default=1, maximum=4096),
    Param("dp", "DP", "", "Data-parallel replicas.", kind="int", default=1, maximum=10**6),
    Param(
        "gpus_per_node",
        "GPUs per node",
        "",
        "8 on the course's nodes.",
        kind="int",
        default=8,
        maximum=1024,
    ),
    PEAK,
    Param(
        "kernel_efficiency",
        "Kernel efficiency",
        "fraction",
        "Share of peak the matrix multiplies reach when busy, e.g. 0.6.",
        kind="fraction_pos",
        default=0.6,
    ),
    Param(
        "intra_bandwidth_bytes_per_s",
        "Inside-node bandwidth",
        "B/s",
        "Per GPU per direction; NVLink 4: 450 GB/s.",
        default=450e9,
    ),
    Param(
        "inter_bandwidth_bytes_per_s",
        "Between-node bandwidth",
        "B/s",
        "Per GPU per direction; the course's GCP network: 12.5 GB/s.",
        default=12.5e9,
    ),
    Param(
        "intra_latency_s",
        "Inside-node latency",
        "s",
        "Per step (0 to ignore).",
        kind="nonnegative",
        default=0.0,
    ),
    Param(
        "inter_latency_s",
        "Between-node latency",
        "s",
        "Per step (0 to ignore).",
        kind="nonnegative",
        default=0.0,
    ),
]


def _step_v(**kw: Any) -> tuple[Any, dict[str, Any]]:
    parts = step_parts(**kw)
    return parts["total_s"], {k: v for k, v in parts.items() if k != "total_s"}


@register(
    name="step-time",
    title="Training step time by part",
    topic="parallelism",
    summary="Compute (6·P·tokens / N / effective peak) + tensor-, pipeline- and data-parallel "
    "communication + pipeline bubble, for a (TP, PP, DP, micro-batch) layout.",
    params=STEP_PARAMS,
    result_unit="s",
    uses_gpu=True,
    vector=_step_v,
    example={
        "active_parameters": "70.6B",
        "parameters": "70.6B",
        "layers": 80,
        "hidden_size": 8192,
        "sequence_length": 4096,
        "global_batch": 64,
        "micro_batch": 1,
        "tp": 8,
        "pp": 2,
        "dp": 1,
        "peak_flops_per_s": "989.5 TFLOPS",
    },
)
def step_time(**kw: Any) -> Result:
    if kw["global_batch"] % (kw["dp"] * kw["micro_batch"]):
        raise InputError(
            "global_batch",
            f"must be a multiple of DP × micro-batch = {kw['dp'] * kw['micro_batch']}",
        )
    if kw["layers"] % kw["pp"]:
        raise InputError("pp", f"must divide the {kw['layers']} layers evenly")
    p = {k: float(v) for k, v in step_parts(**kw).items()}
    total = p["total_s"]
    n, m = int(p["gpus"]), int(p["microbatches"])

    def share(x: float) -> str:
        return f"{fmt(x, 's') if x else '0 s'} ({pct(x / total)})"

    steps = (
        f"{n} GPUs = TP {kw['tp']} × PP {kw['pp']} × DP {kw['dp']}; {m} micro-batches of "
        f"{kw['micro_batch']} per pipeline",
        f"compute = 6 × {cnt(kw['active_parameters'])} × "
        f"{kw['global_batch'] * kw['sequence_length']:,} tokens / {n} / "
        f"({fmt(kw['peak_flops_per_s'], 'FLOP/s')} × {sig(kw['kernel_efficiency'])}) = "
        f"{share(p['compute_s'])}",
        "tensor parallel: 4 AllReduces per layer per micro-batch of b·s·h·2 B = "
        f"{fmt(kw['micro_batch'] * kw['sequence_length'] * kw['hidden_size'] * 2.0, 'B')} = "
        f"{share(p['tp_comm_s'])}",
        "pipeline: 2 sends per micro-batch (activations forward, gradients back) = "
        f"{share(p['pp_comm_s'])}",
        f"data parallel: AllReduce of {fmt(2 * kw['parameters'] / (kw['tp'] * kw['pp']), 'B')} of "
        f"bf16 gradients, inside the node first = {share(p['dp_comm_s'])}",
        f"bubble (1F1B) = (PP − 1)/m × compute = {share(p['bubble_s'])}",
        f"step = {fmt(total, 's')}; MFU = {pct(p['mfu'])}; {sig(p['tokens_per_s'])} tokens/s",
    )
    return Result(
        "step-time",
        total,
        "s",
        "Step time",
        "T = compute + TP + PP + DP + bubble",
        steps,
        convention="nothing overlapped (an upper bound); 6·P·D FLOPs without attention's s² term; "
        "ranks ordered TP, DP, PP; 1F1B schedule",
        extras={k: v for k, v in p.items() if k != "total_s"},
    )
