"""Inference and serving: prefill and decode FLOPs, time to first token and per output token
from the roofline, paged and MLA KV caches, the KV-limited batch, speculative decoding,
M/M/c queueing, Little's law and quantized weights."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from apps.perfcalc.calc.core import InputError, Result, cnt, fmt, pct, sig
from apps.perfcalc.calc.formulas.common import (
    BANDWIDTH,
    PEAK,
    PRECISION,
    PRECISION_BYTES,
    ceil_count,
)
from apps.perfcalc.calc.registry import Param, register

ACTIVE = Param(
    "active_parameters",
    "Active parameters",
    "count",
    "Parameters each token passes through (all for a dense model; 37B for DeepSeek-V3). Or give "
    "model.",
)
TOTAL = Param(
    "parameters", "Parameters", "count", "All weights held in memory (every expert), e.g. 70.6B."
)
LAYERS = Param("layers", "Layers", "", "e.g. 80.", kind="int")
HEADS = Param("heads", "Attention heads", "", "Query heads, e.g. 64.", kind="int")
KV_HEADS = Param(
    "kv_heads", "KV heads", "", "Key/value heads (fewer with GQA), e.g. 8.", kind="int"
)
HEAD_DIM = Param("head_dim", "Head dimension", "", "e.g. 128.", kind="int")
BATCH = Param(
    "batch_size", "Batch size", "", "Sequences processed together.", kind="int", default=1
)
KV_PRECISION = Param(
    "kv_precision",
    "KV-cache precision",
    "",
    "bf16/fp16 2 bytes, fp8/int8 1.",
    kind="choice",
    default="bf16",
    choices=("fp32", "bf16", "fp16", "fp8", "int8"),
)
N_GPUS = Param(
    "n_gpus",
    "GPUs",
    "",
    "GPUs the model is split over (tensor parallel; ideal split).",
    kind="int",
    default=1,
    maximum=4096,
)


def _attn(layers, heads, head_dim, s_q, s_kv):
    """QKᵀ and A·V, per layer.

    2 matmuls × 2 FLOP per multiply-add × s_q × s_kv × (heads × head_dim).
    """
    return 4 * layers * s_q * s_kv * heads * head_dim


def _prefill_v(active_parameters, layers, heads, head_dim, prompt_tokens, batch_size, causal):
    linear = 2 * active_parameters * prompt_tokens
    attention = _attn(layers, heads, head_dim, prompt_tokens, prompt_tokens) * (
        0.5 if causal else 1.0
    )
    return batch_size * (linear + attention), {
        "linear_flops": batch_size * linear,
        "attention_flops": batch_size * attention,
    }


PROMPT = Param(
    "prompt_tokens", "Prompt tokens S", "", "Tokens in the prompt, e.g. 8192.", kind="int"
)
CAUSAL = Param(
    "causal",
    "Causal mask",
    "",
    "Only the lower triangle of the S×S scores is computed "
    "(true for decoder LLMs with FlashAttention); false counts the full square.",
    kind="bool",
    default=True,
)


@register(
    name="prefill-flops",
    title="Prefill FLOPs",
    topic="serving",
    summary="2·P·S for the weights plus attention's quadratic term 4·L·S²·(heads·head_dim), halved "
    "by the causal mask.",
    params=[ACTIVE, LAYERS, HEADS, HEAD_DIM, PROMPT, BATCH, CAUSAL],
    result_unit="FLOP",
    vector=_prefill_v,
    example={
        "active_parameters": "8.03B",
        "layers": 32,
        "heads": 32,
        "head_dim": 128,
        "prompt_tokens": 8192,
    },
)
def prefill_flops(
    *,
    active_parameters: float,
    layers: int,
    heads: int,
    head_dim: int,
    prompt_tokens: int,
    batch_size: int,
    causal: bool,
) -> Result:
    total, parts = _prefill_v(
        active_parameters, layers, heads, head_dim, prompt_tokens, batch_size, causal
    )
    lin, att = float(parts["linear_flops"]), float(parts["attention_flops"])
    return Result(
        "prefill-flops",
        float(total),
        "FLOP",
        "Prefill FLOPs",
        "F = B·(2·P·S + c·4·L·S²·H·d), c = ½ if causal",
        (
            f"weights: 2 × {cnt(active_parameters)} × {prompt_tokens:,} tokens × {batch_size} = "
            f"{fmt(lin, 'FLOP')}",
            f"attention: 4 × {layers} × {prompt_tokens:,}² × "
            f"{heads}·{head_dim}{' × ½ (causal)' if causal else ''} × "
            f"{batch_size} = {fmt(att, 'FLOP')} ({pct(att / float(total))} of the total)",
            f"F = {fmt(float(total), 'FLOP')}",
        ),
        convention="causal: half the S×S score matrix"
        if causal
        else "full S×S attention (no mask savings)",
        extras={"linear_flops": lin, "attention_flops": att},
    )


CONTEXT = Param(
    "context_length", "Context length", "", "Tokens already in the KV cache, e.g. 8192.", kind="int"
)


def _decode_v(active_parameters, layers, heads, head_dim, context_length, batch_size):
    linear = 2 * active_parameters
    attention = _attn(layers, heads, head_dim, 1, context_length)
    return batch_size * (linear + attention), {"attention_flops": batch_size * attention}


@register(
    name="decode-flops",
    title="Decode FLOPs per step",
    topic="serving",
    summary="One new token per sequence: 2·P for the weights plus 4·L·T·(heads·head_dim) of "
    "attention over the T cached tokens.",
    params=[ACTIVE, LAYERS, HEADS, HEAD_DIM, CONTEXT, BATCH],
    result_unit="FLOP",
    vector=_decode_v,
    example={
        "active_parameters": "8.03B",
        "layers": 32,
        "heads": 32,
        "head_dim": 128,
        "context_length": 8192,
    },
)
def decode_flops(
    *,
    active_parameters: float,
    layers: int,
    heads: int,
    head_dim: int,
    context_length: int,
    batch_size: int,
) -> Result:
    total, parts = _decode_v(active_parameters, layers, heads, head_dim, context_length, batch_size)
    att = float(parts["attention_flops"])
    return Result(
        "decode-flops",
        float(total),
        "FLOP",
        "Decode FLOPs per step",
        "F = B·(2·P + 4·L·T·H·d)",
        (
            f"weights: 2 × {cnt(active_parameters)} × {batch_size} = "
            f"{fmt(2 * active_parameters * batch_size, 'FLOP')}",
            f"attention over {context_length:,} cached tokens: 4 × {layers} × {context_length:,} × "
            f"{heads}·{head_dim} × {batch_size} = {fmt(att, 'FLOP')}",
            f"F = {fmt(float(total), 'FLOP')}",
        ),
        extras={"attention_flops": att},
        convention="2 FLOP per multiply-add; attention reads all T cached tokens (no sparsity or "
        "windowing); width = heads × head_dim",
    )


def _kv_bytes_per_token(layers, kv_heads, head_dim, kv_precision):
    return 2 * layers * kv_heads * head_dim * PRECISION_BYTES[kv_precision]


def _ttft_v(
    parameters,
    active_parameters,
    layers,
    heads,
    kv_heads,
    head_dim,
    prompt_tokens,
    batch_size,
    precision,
    kv_precision,
    peak_flops_per_s,
    bandwidth_bytes_per_s,
    n_gpus,
):
    flops, _ = _prefill_v(
        active_parameters, layers, heads, head_dim, prompt_tokens, batch_size, True
    )
    moved = (
        parameters * PRECISION_BYTES[precision]
        + _kv_bytes_per_token(layers, kv_heads, head_dim, kv_precision) * prompt_tokens * batch_size
    )
    compute = flops / (peak_flops_per_s * n_gpus)
    memory = moved / (bandwidth_bytes_per_s * n_gpus)
    return np.maximum(compute, memory), {
        "compute_s": compute,
        "memory_s": memory,
        "flops": flops,
        "bytes": moved,
    }


SERVE_COMMON = [TOTAL, ACTIVE, LAYERS, HEADS, KV_HEADS, HEAD_DIM]


@register(
    name="ttft",
    title="Time to first token (prefill roofline)",
    topic="serving",
    summary="max(prefill FLOPs / peak, (weights + KV written) / bandwidth): prefill is usually "
    "compute-bound.",
    params=[*SERVE_COMMON, PROMPT, BATCH, PRECISION, KV_PRECISION, PEAK, BANDWIDTH, N_GPUS],
    result_unit="s",
    uses_gpu=True,
    vector=_ttft_v,
    example={
        "parameters": "8.03B",
        "active_parameters": "8.03B",
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "prompt_tokens": 4096,
        "peak_flops_per_s": "989.5 TFLOPS",
        "bandwidth_bytes_per_s": "3.35 TB/s",
    },
)
def ttft(**kw: Any) -> Result:
    t, p = _ttft_v(**kw)
    compute, memory = float(p["compute_s"]), float(p["memory_s"])
    bound = "compute-bound" if compute >= memory else "memory-bound"
    n = kw["n_gpus"]
    return Result(
        "ttft",
        float(t),
        "s",
        "Time to first token",
        "TTFT = max(F_prefill / peak, bytes / BW)",
        (
            f"prefill FLOPs (causal) = {fmt(float(p['flops']), 'FLOP')}; compute time = that / "
            f"({n} × {fmt(kw['peak_flops_per_s'], 'FLOP/s')}) = {fmt(compute, 's')}",
            f"bytes = weights {fmt(kw['parameters'] * PRECISION_BYTES[kw['precision']], 'B')} + KV "
            f"written; memory time = {fmt(float(p['bytes']), 'B')} / ({n} × "
            f"{fmt(kw['bandwidth_bytes_per_s'], 'B/s')}) = {fmt(memory, 's')}",
            f"TTFT = max = {fmt(float(t), 's')} ({bound})",
        ),
        classification=bound,
        convention="ideal roofline at peak (real kernels reach 50–70 %); queueing and network not "
        "counted",
        extras={"compute_s": compute, "memory_s": memory},
    )


def _tpot_v(
    parameters,
    active_parameters,
    layers,
    heads,
    kv_heads,
    head_dim,
    context_length,
    batch_size,
    precision,
    kv_precision,
    peak_flops_per_s,
    bandwidth_bytes_per_s,
    n_gpus,
):
    flops, _ = _decode_v(active_parameters, layers, heads, head_dim, context_length, batch_size)
    kv = _kv_bytes_per_token(layers, kv_heads, head_dim, kv_precision) * context_length * batch_size
    moved = parameters * PRECISION_BYTES[precision] + kv
    compute = flops / (peak_flops_per_s * n_gpus)
    memory = moved / (bandwidth_bytes_per_s * n_gpus)
    t = np.maximum(compute, memory)
    return t, {
        "compute_s": compute,
        "memory_s": memory,
        "kv_bytes": kv,
        "tokens_per_s": batch_size / t,
    }


@register(
    name="tpot",
    title="Time per output token (decode roofline)",
    topic="serving",
    summary="max(decode FLOPs / peak, (weights + KV cache read) / bandwidth): decode is usually "
    "memory-bound.",
    params=[*SERVE_COMMON, CONTEXT, BATCH, PRECISION, KV_PRECISION, PEAK, BANDWIDTH, N_GPUS],
    result_unit="s",
    uses_gpu=True,
    vector=_tpot_v,
    example={
        "parameters": "8.03B",
        "active_parameters": "8.03B",
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "context_length": 4096,
        "batch_size": 16,
        "peak_flops_per_s": "989.5 TFLOPS",
        "bandwidth_bytes_per_s": "3.35 TB/s",
    },
)
def tpot(**kw: Any) -> Result:
    t, p = _tpot_v(**kw)
    compute, memory = float(p["compute_s"]), float(p["memory_s"])
    bound = "compute-bound" if compute >= memory else "memory-bound"
    n = kw["n_gpus"]
    decode_flops, _ = _decode_v(
        kw["active_parameters"],
        kw["layers"],
        kw["heads"],
        kw["head_dim"],
        kw["context_length"],
        kw["batch_size"],
    )
    weights = fmt(kw["parameters"] * PRECISION_BYTES[kw["precision"]], "B")
    return Result(
        "tpot",
        float(t),
        "s",
        "Time per output token",
        "TPOT = max(F_decode / peak, (weights + KV) / BW)",
        (
            f"compute = {fmt(float(decode_flops), 'FLOP')} / "
            f"({n} × {fmt(kw['peak_flops_per_s'], 'FLOP/s')}) = {fmt(compute, 's')}",
            f"bytes read = weights {weights} + KV cache {fmt(float(p['kv_bytes']), 'B')}; "
            f"memory time = {fmt(memory, 's')}",
            f"TPOT = {fmt(float(t), 's')} ({bound}); "
            f"{sig(float(p['tokens_per_s']))} tokens/s for the batch",
        ),
        classification=bound,
        convention="every weight read once per step (all experts for MoE: an upper bound at small "
        "batch); ideal roofline",
        extras={"compute_s": compute, "memory_s": memory, "tokens_per_s": float(p["tokens_per_s"])},
    )


def _paged_v(layers, kv_heads, head_dim, sequence_length, batch_size, page_size, precision):
    pages = ceil_count(sequence_length / page_size)
    padded = pages * page_size
    per_token = 2 * layers * kv_heads * head_dim * PRECISION_BYTES[precision]
    allocated = per_token * padded * batch_size
    return allocated, {
        "used_bytes": per_token * sequence_length * batch_size,
        "pages_per_sequence": pages,
        "waste_fraction": (padded - sequence_length) / padded,
    }


@register(
    name="paged-kv-cache",
    title="Paged KV cache (PagedAttention)",
    topic="serving",
    summary="KV memory allocated in fixed pages: 2·L·H_kv·d·bytes × ⌈S / page⌉·page × B; the last "
    "page's unused slots are the waste.",
    params=[
        LAYERS,
        KV_HEADS,
        HEAD_DIM,
        Param("sequence_length", "Tokens per sequence", "", "e.g. 1000.", kind="int"),
        BATCH,
        Param(
            "page_size",
            "Page size",
            "",
            "Tokens per page (vLLM's default block is 16).",
            kind="int",
            default=16,
            maximum=1_000_000,
        ),
        PRECISION,
    ],
    result_unit="B",
    vector=_paged_v,
    example={
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "sequence_length": 1000,
        "batch_size": 8,
        "page_size": 16,
    },
)
def paged_kv_cache(
    *,
    layers: int,
    kv_heads: int,
    head_dim: int,
    sequence_length: int,
    batch_size: int,
    page_size: int,
    precision: str,
) -> Result:
    allocated, p = _paged_v(
        layers, kv_heads, head_dim, sequence_length, batch_size, page_size, precision
    )
    pages = int(p["pages_per_sequence"])
    waste = float(p["waste_fraction"])
    return Result(
        "paged-kv-cache",
        float(allocated),
        "B",
        "KV cache allocated",
        "KV = 2·L·H_kv·d·bytes × ⌈S/page⌉·page × B",
        (
            f"per token = 2 × {layers} × {kv_heads} × {head_dim} × "
            f"{sig(PRECISION_BYTES[precision])} B = "
            f"{fmt(2 * layers * kv_heads * head_dim * PRECISION_BYTES[precision], 'B')}",
            f"pages per sequence = ⌈{sequence_length} / {page_size}⌉ = {pages} "
            f"({pages * page_size} slots)",
            f"allocated = {fmt(float(allocated), 'B')}; used {fmt(float(p['used_bytes']), 'B')}; "
            f"waste {pct(waste)} of the allocation (only the last page of each sequence)",
        ),
        convention="waste = unused slots of the last page / allocated slots (internal "
        "fragmentation only)",
        extras={
            "used_bytes": float(p["used_bytes"]),
            "waste_fraction": waste,
            "pages_per_sequence": pages,
        },
    )


def _mla_v(layers, kv_lora_rank, rope_head_dim, sequence_length, batch_size, precision):
    return (
        layers
        * (kv_lora_rank + rope_head_dim)
        * sequence_length
        * batch_size
        * PRECISION_BYTES[precision]
    )


@register(
    name="mla-kv-cache",
    title="MLA (compressed) KV cache",
    topic="serving",
    summary="Multi-head latent attention caches one latent vector plus a small RoPE key per token "
    "per layer: L·(d_c + d_rope)·S·B·bytes.",
    params=[
        LAYERS,
        Param(
            "kv_lora_rank",
            "Latent size d_c",
            "",
            "Compressed KV dimension, 512 in DeepSeek-V3.",
            kind="int",
        ),
        Param(
            "rope_head_dim",
            "RoPE key size",
            "",
            "Decoupled positional key, 64 in DeepSeek-V3.",
            kind="int",
        ),
        Param("sequence_length", "Tokens per sequence", "", "e.g. 32768.", kind="int"),
        BATCH,
        PRECISION,
    ],
    result_unit="B",
    vector=_mla_v,
    example={"layers": 61, "kv_lora_rank": 512, "rope_head_dim": 64, "sequence_length": 32768},
)
def mla_kv_cache(
    *,
    layers: int,
    kv_lora_rank: int,
    rope_head_dim: int,
    sequence_length: int,
    batch_size: int,
    precision: str,
) -> Result:
    total = float(
        _mla_v(layers, kv_lora_rank, rope_head_dim, sequence_length, batch_size, precision)
    )
    per = layers * (kv_lora_rank + rope_head_dim) * PRECISION_BYTES[precision]
    return Result(
        "mla-kv-cache",
        total,
        "B",
        "MLA KV cache",
        "KV = L·(d_c + d_rope)·S·B·bytes",
        (
            f"per token = {layers} × ({kv_lora_rank} + {rope_head_dim}) × "
            f"{sig(PRECISION_BYTES[precision])} B = {fmt(per, 'B')}",
            f"KV = {fmt(per, 'B')} × {sequence_length:,} × {batch_size} = {fmt(total, 'B')}",
        ),
        convention="DeepSeek-V2/V3 MLA: the latent and the decoupled RoPE key are cached; K and V "
        "are re-expanded (or absorbed into the projections) at attention time",
        extras={"bytes_per_token": per},
    )


def _maxbatch_v(
    parameters,
    precision,
    layers,
    kv_heads,
    head_dim,
    sequence_length,
    kv_precision,
    gpu_memory_bytes,
    n_gpus,
    usable_fraction,
):
    weights = parameters * PRECISION_BYTES[precision]
    room = gpu_memory_bytes * n_gpus * usable_fraction - weights
    per_seq = _kv_bytes_per_token(layers, kv_heads, head_dim, kv_precision) * sequence_length
    return np.maximum(np.floor(room / per_seq * (1 + 1e-12)), 0), {
        "weights_bytes": weights,
        "kv_room_bytes": room,
        "kv_per_sequence_bytes": per_seq,
    }


@register(
    name="kv-max-batch",
    title="KV-cache-limited maximum batch",
    topic="serving",
    summary="Sequences that fit beside the weights: ⌊(N·memory·usable − weights) / KV per "
    "sequence⌋.",
    params=[
        TOTAL,
        PRECISION,
        LAYERS,
        KV_HEADS,
        HEAD_DIM,
        Param(
            "sequence_length",
            "Tokens per sequence",
            "",
            "Prompt + output held, e.g. 8192.",
            kind="int",
        ),
        KV_PRECISION,
        Param("gpu_memory_bytes", "Memory per GPU", "B", "e.g. 80 GB (or give gpu)."),
        N_GPUS,
        Param(
            "usable_fraction",
            "Usable share",
            "fraction",
            "Share of memory for weights + KV (the rest: "
            "activations, CUDA graphs, fragmentation), e.g. 0.9.",
            kind="fraction_pos",
            default=0.9,
        ),
    ],
    result_unit="sequences",
    uses_gpu=True,
    vector=_maxbatch_v,
    example={
        "parameters": "8.03B",
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "sequence_length": 8192,
        "gpu_memory_bytes": "80 GB",
    },
)
def kv_max_batch(**kw: Any) -> Result:
    b, p = _maxbatch_v(**kw)
    weights, room, per_seq = (
        float(p["weights_bytes"]),
        float(p["kv_room_bytes"]),
        float(p["kv_per_sequence_bytes"]),
    )
    usable = kw["gpu_memory_bytes"] * kw["n_gpus"] * kw["usable_fraction"]
    if room <= 0:
        raise InputError(
            "gpu_memory_bytes",
            f"the weights ({fmt(weights, 'B')}) do not fit in {fmt(usable, 'B')} of "
            "usable memory: add GPUs or quantize",
        )
    n = int(b)
    return Result(
        "kv-max-batch",
        float(n),
        "sequences",
        "Maximum batch",
        "B_max = ⌊(N·mem·usable − weights) / KV per sequence⌋",
        (
            f"usable = {kw['n_gpus']} × {fmt(kw['gpu_memory_bytes'], 'B')} × "
            f"{sig(kw['usable_fraction'])} = {fmt(usable, 'B')}",
            f"room for KV = {fmt(usable, 'B')} − weights {fmt(weights, 'B')} = {fmt(room, 'B')}",
            f"KV per sequence = 2 × {kw['layers']} × {kw['kv_heads']} × {kw['head_dim']} × "
            f"{sig(PRECISION_BYTES[kw['kv_precision']])} B × {kw['sequence_length']:,} = "
            f"{fmt(per_seq, 'B')}",
            f"B_max = ⌊{sig(room / per_seq)}⌋ = {n}",
        ),
        classification=None if n else "not even one sequence of this length fits",
        extras={"kv_room_bytes": room, "kv_per_sequence_bytes": per_seq, "weights_bytes": weights},
        convention="every sequence held at its full length; weights and KV share the usable "
        "memory, activations in the rest",
    )


def _spec_v(acceptance_rate, draft_tokens, draft_cost):
    a = np.minimum(acceptance_rate, 1 - 1e-15)
    expected = np.where(
        acceptance_rate >= 1, draft_tokens + 1.0, (1 - a ** (draft_tokens + 1)) / (1 - a)
    )
    return expected / (draft_tokens * draft_cost + 1), {"expected_tokens": expected}


@register(
    name="speculative-decoding",
    title="Speculative decoding speed-up",
    topic="serving",
    summary="Tokens per round E = (1 − α^(γ+1)) / (1 − α); speed-up = E / (γ·c + 1) (Leviathan et "
    "al. 2023).",
    params=[
        Param(
            "acceptance_rate",
            "Acceptance rate α",
            "fraction",
            "Chance the target accepts a draft token, e.g. 0.8.",
            kind="fraction_pos",
        ),
        Param(
            "draft_tokens",
            "Draft length γ",
            "",
            "Tokens drafted per round, e.g. 4.",
            kind="int",
            maximum=1000,
        ),
        Param(
            "draft_cost",
            "Draft cost c",
            "fraction",
            "One draft forward pass relative to one target pass, e.g. 0.05 (0 = free).",
            kind="nonnegative",
            default=0.0,
        ),
    ],
    result_unit="×",
    vector=_spec_v,
    example={"acceptance_rate": 0.8, "draft_tokens": 4, "draft_cost": 0.05},
)
def speculative_decoding(*, acceptance_rate: float, draft_tokens: int, draft_cost: float) -> Result:
    s, p = _spec_v(acceptance_rate, draft_tokens, draft_cost)
    e = float(p["expected_tokens"])
    a, g = acceptance_rate, draft_tokens
    first = (
        f"E = {g} + 1 = {sig(e)} (every draft accepted)"
        if a >= 1
        else f"E = (1 − {sig(a)}^{g + 1}) / (1 − {sig(a)}) = {sig(e)} tokens per target pass"
    )
    return Result(
        "speculative-decoding",
        float(s),
        "×",
        "Speed-up",
        "S = (1 − α^(γ+1)) / ((1 − α)(γ·c + 1))",
        (
            first,
            f"cost of a round = {g} × {sig(draft_cost)} + 1 = {sig(g * draft_cost + 1)} target "
            "passes",
            f"S = {sig(e)} / {sig(g * draft_cost + 1)} = {sig(float(s))}×",
        ),
        classification="slower than plain decoding" if float(s) < 1 else None,
        convention="i.i.d. acceptance (Leviathan et al. 2023, eq. 1 and Theorem 3.8); verifying "
        "γ+1 tokens costs one target pass",
        extras={"expected_tokens": e},
    )


def erlang_c(servers: int, offered: float) -> float:
    """Probability an arrival waits in M/M/c (offered load A = λ/μ < c), through the Erlang B
    recursion, which stays finite for any number of servers."""
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    rho = offered / servers
    return b / (1 - rho * (1 - b))


def _quantile_wait(p_wait: float, rate: float, q: float) -> float:
    return 0.0 if p_wait <= 1 - q else math.log(p_wait / (1 - q)) / rate


def _mmc_scalar(arrival_rate, service_rate, servers, percentile):
    c = int(servers)
    if arrival_rate >= c * service_rate:
        return math.inf, 1.0, math.inf, math.inf, math.inf
    pw = erlang_c(c, arrival_rate / service_rate)
    rate = c * service_rate - arrival_rate
    return (
        _quantile_wait(pw, rate, percentile),
        pw,
        pw / rate,
        _quantile_wait(pw, rate, 0.5),
        _quantile_wait(pw, rate, 0.99),
    )


MAX_QUEUE_WORK = 20_000_000  # rows × largest c for one batch call (the Erlang recursion is O(c))


def _mmc_v(arrival_rate, service_rate, servers, percentile):
    lam, mu, c, q = np.broadcast_arrays(
        *(
            np.asarray(x, dtype=np.float64)
            for x in (arrival_rate, service_rate, servers, percentile)
        )
    )
    top = int(c.max()) if c.size else 0
    if c.size * top > MAX_QUEUE_WORK:
        raise InputError(
            "servers",
            f"rows × replicas is too large for one batch call (at most {MAX_QUEUE_WORK:,})",
        )
    offered = lam / mu
    b = np.ones_like(offered)
    for k in range(
        1, top + 1
    ):  # Erlang B recursion, every row at once; rows with c < k keep theirs
        b = np.where(k <= c, offered * b / (k + offered * b), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        stable = lam < c * mu
        pw = np.where(stable, b / (1 - offered / c * (1 - b)), 1.0)
        rate = np.where(stable, c * mu - lam, np.nan)

        def quantile(level):
            return np.where(pw <= 1 - level, 0.0, np.log(pw / (1 - level)) / rate)

        return np.where(stable, quantile(q), np.inf), {
            "p_wait": pw,
            "mean_wait_s": pw / rate,
            "p50_wait_s": quantile(0.5),
            "p99_wait_s": quantile(0.99),
        }


@register(
    name="mmc-queue",
    title="Queueing wait (M/M/c)",
    topic="serving",
    summary="c replicas, Poisson arrivals λ, service rate μ each: Erlang C gives P(wait) and P(W > "
    "t) = C·e^(−(cμ−λ)t), hence p50 and p99 waits.",
    params=[
        Param("arrival_rate", "Arrival rate λ", "QPS", "Requests per second arriving, e.g. 90."),
        Param(
            "service_rate",
            "Service rate μ per replica",
            "QPS",
            "Requests per second one replica completes, e.g. 10 (1 / mean service time).",
        ),
        Param("servers", "Replicas c", "", "e.g. 10.", kind="int", maximum=100_000),
        Param(
            "percentile",
            "Percentile",
            "fraction",
            "Which wait to report, e.g. 0.99 for p99.",
            kind="fraction_pos",
            default=0.99,
        ),
    ],
    result_unit="s",
    vector=_mmc_v,
    example={"arrival_rate": 80, "service_rate": 10, "servers": 10},
)
def mmc_queue(
    *, arrival_rate: float, service_rate: float, servers: int, percentile: float
) -> Result:
    capacity = servers * service_rate
    if arrival_rate >= capacity:
        raise InputError(
            "arrival_rate",
            f"λ = {sig(arrival_rate)}/s is at or above the capacity c·μ = {sig(capacity)}/s: "
            "the queue grows without bound; add replicas or serve faster",
        )
    if percentile >= 1:
        raise InputError(
            "percentile",
            "must be below 1 (the 100th percentile of an exponential tail is infinite)",
        )
    wait, pw, mean, p50, p99 = _mmc_scalar(arrival_rate, service_rate, servers, percentile)
    rho = arrival_rate / capacity
    rate = capacity - arrival_rate
    return Result(
        "mmc-queue",
        wait,
        "s",
        f"p{sig(percentile * 100)} wait in queue",
        "P(W > t) = C(c, λ/μ) · e^(−(cμ − λ)t)",
        (
            f"utilisation ρ = λ / (c·μ) = {sig(arrival_rate)} / ({servers} × {sig(service_rate)}) "
            f"= {pct(rho)}",
            f"Erlang C: P(wait) = {sig(pw)}",
            f"mean wait = P(wait) / (cμ − λ) = {sig(pw)} / {sig(rate)} = "
            f"{fmt(mean, 's') if mean else '0 s'}",
            f"p{sig(percentile * 100)} wait = ln(P(wait) / (1 − {sig(percentile)})) / (cμ − λ) = "
            f"{fmt(wait, 's') if wait else '0 s (most requests never wait)'}",
            f"p50 {fmt(p50, 's') if p50 else '0 s'}, p99 {fmt(p99, 's') if p99 else '0 s'}; add "
            f"the service time {fmt(1 / service_rate, 's')} for the response time",
        ),
        classification="heavily loaded (ρ ≥ 0.9): waits grow sharply" if rho >= 0.9 else None,
        convention="M/M/c: Poisson arrivals, exponential service, first come first served; wait in "
        "queue only",
        extras={
            "utilisation": rho,
            "p_wait": pw,
            "mean_wait_s": mean,
            "p50_wait_s": p50,
            "p99_wait_s": p99,
        },
    )


def _little_v(arrival_rate, latency_s, concurrency_per_replica):
    in_flight = arrival_rate * latency_s
    return in_flight, {"replicas": ceil_count(in_flight / concurrency_per_replica)}


@register(
    name="littles-law",
    title="Little's law (requests in flight, replicas)",
    topic="serving",
    summary="L = λ·W requests in flight; replicas = ⌈L / concurrent requests per replica⌉.",
    params=[
        Param("arrival_rate", "Arrival rate λ", "QPS", "Requests per second, e.g. 200."),
        Param("latency_s", "Time in system W", "s", "Mean end-to-end latency, e.g. 2.5 s."),
        Param(
            "concurrency_per_replica",
            "Concurrent requests per replica",
            "",
            "e.g. 32 (a continuous batch).",
            kind="int",
            default=1,
        ),
    ],
    result_unit="requests",
    vector=_little_v,
    example={"arrival_rate": 200, "latency_s": "2.5 s", "concurrency_per_replica": 32},
)
def littles_law(*, arrival_rate: float, latency_s: float, concurrency_per_replica: int) -> Result:
    in_flight, p = _little_v(arrival_rate, latency_s, concurrency_per_replica)
    replicas = int(p["replicas"])
    return Result(
        "littles-law",
        float(in_flight),
        "requests",
        "Requests in flight",
        "L = λ · W",
        (
            f"L = {sig(arrival_rate)}/s × {fmt(latency_s, 's')} = {sig(float(in_flight))} requests",
            f"replicas = ⌈{sig(float(in_flight))} / {concurrency_per_replica}⌉ = {replicas}",
        ),
        convention="steady state averages; holds for any arrival and service distribution",
        extras={"replicas": replicas},
    )


QUANT_BITS = {"int8": 8.0, "fp8": 8.0, "int4": 4.0}


def _quant_v(parameters, quant_format, group_size, scale_bytes, zero_point):
    bits = QUANT_BITS[quant_format] + 8 * scale_bytes * (2 if zero_point else 1) / group_size
    return parameters * bits / 8, {"bits_per_weight": bits + 0 * parameters}


@register(
    name="quantized-weights",
    title="Quantized weight memory",
    topic="serving",
    summary="Bytes = P × (bits + 8·scale bytes·(1 + zero point) / group size) / 8: the group "
    "scales are the overhead.",
    params=[
        Param("parameters", "Parameters", "count", "e.g. 70.6B."),
        Param(
            "quant_format",
            "Format",
            "",
            "int8 or fp8: 8 bits; int4: 4 bits.",
            kind="choice",
            default="int4",
            choices=tuple(QUANT_BITS),
        ),
        Param(
            "group_size",
            "Group size g",
            "",
            "Weights sharing one scale, e.g. 128 (GPTQ/AWQ); a large number "
            "for per-channel or per-tensor scales.",
            kind="int",
            default=128,
        ),
        Param(
            "scale_bytes",
            "Scale bytes",
            "",
            "Bytes per scale, 2 for fp16.",
            kind="nonnegative",
            default=2.0,
        ),
        Param(
            "zero_point",
            "Zero point",
            "",
            "Asymmetric quantization stores a zero point per group too.",
            kind="bool",
            default=False,
        ),
    ],
    result_unit="B",
    vector=_quant_v,
    example={"parameters": "70.6B", "quant_format": "int4", "group_size": 128},
)
def quantized_weights(
    *, parameters: float, quant_format: str, group_size: int, scale_bytes: float, zero_point: bool
) -> Result:
    total, p = _quant_v(parameters, quant_format, group_size, scale_bytes, zero_point)
    bits = float(p["bits_per_weight"])
    overhead = bits - QUANT_BITS[quant_format]
    return Result(
        "quantized-weights",
        float(total),
        "B",
        f"Weights in {quant_format.upper()}",
        "bytes = P × (b + 8·s·(1 + z)/g) / 8",
        (
            f"scale overhead = 8 × {sig(scale_bytes)} B × {2 if zero_point else 1} / {group_size} "
            f"= {sig(overhead)} bits per weight",
            f"bits per weight = {sig(QUANT_BITS[quant_format])} + {sig(overhead)} = {sig(bits)}",
            f"bytes = {cnt(parameters)} × {sig(bits)} / 8 = {fmt(float(total), 'B')} "
            f"(bf16 would be {fmt(parameters * 2, 'B')})",
        ),
        convention="group-wise scales (one per g weights, GPTQ/AWQ style); embeddings and norms "
        "quantized too",
        extras={"bits_per_weight": bits, "bf16_bytes": parameters * 2},
    )
