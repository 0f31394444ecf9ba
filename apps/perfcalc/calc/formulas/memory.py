"""Memory: weights by precision, training memory with Adam, KV-cache, GPUs per replica."""

from __future__ import annotations

from apps.perfcalc.calc.core import Result, fmt, sig
from apps.perfcalc.calc.formulas.common import (
    PARAMETERS,
    PRECISION,
    PRECISION_BYTES,
    TRAINING_PRECISIONS,
    ceil_count,
)
from apps.perfcalc.calc.registry import Param, register


@register(
    name="model-memory",
    title="Model memory",
    topic="memory",
    summary="Bytes of weights: parameters × bytes per parameter at the chosen precision.",
    params=[PARAMETERS, PRECISION],
    result_unit="B",
    vector=lambda parameters, precision: parameters * PRECISION_BYTES[precision],
    example={"parameters": "70B", "precision": "fp16"},
)
def model_memory(*, parameters: float, precision: str) -> Result:
    per = PRECISION_BYTES[precision]
    total = parameters * per
    return Result(
        "model-memory",
        total,
        "B",
        f"Weights in {precision.upper()}",
        "memory = parameters × bytes/parameter",
        (
            f"{precision.upper()} stores {sig(per)} bytes per parameter",
            f"memory = {sig(parameters)} × {sig(per)} B = {fmt(total, 'B')}",
        ),
        convention="decimal units: GB = 10⁹ bytes",
        extras={"gib": total / 2**30},
    )


# bytes per parameter: (weights, gradients, optimizer state incl. fp32 master copy if mixed)
_OPTIMIZER_STATE = {"adam": 8.0, "sgd-momentum": 4.0, "sgd": 0.0}


def _training_bytes(precision: str, optimizer: str) -> tuple[float, float, float, float]:
    w = PRECISION_BYTES[precision]
    master = 4.0 if w < 4 else 0.0  # mixed precision keeps an fp32 master copy
    return w, w, master, _OPTIMIZER_STATE[optimizer]


@register(
    name="training-memory",
    title="Training memory (weights, gradients, optimizer)",
    topic="memory",
    summary="Mixed-precision Adam needs 16 bytes per parameter before activations.",
    params=[
        PARAMETERS,
        Param(
            "precision",
            "Training precision",
            "",
            "bf16/fp16 = mixed precision with an fp32 master copy; fp32 = full precision.",
            kind="choice",
            default="bf16",
            choices=TRAINING_PRECISIONS,
        ),
        Param(
            "optimizer",
            "Optimizer",
            "",
            "Adam keeps two fp32 moments per parameter; SGD with momentum one.",
            kind="choice",
            default="adam",
            choices=tuple(_OPTIMIZER_STATE),
        ),
    ],
    result_unit="B",
    vector=lambda parameters, precision, optimizer: (
        parameters * sum(_training_bytes(precision, optimizer))
    ),
    example={"parameters": "7B", "precision": "bf16", "optimizer": "adam"},
)
def training_memory(*, parameters: float, precision: str, optimizer: str) -> Result:
    w, g, master, state = _training_bytes(precision, optimizer)
    per = w + g + master + state
    total = parameters * per
    return Result(
        "training-memory",
        total,
        "B",
        "Training memory",
        "memory = parameters × (weights + gradients + master copy + optimizer state)",
        (
            f"bytes per parameter = {sig(w)} (weights) + {sig(g)} (gradients) + {sig(master)} "
            f"(fp32 master) + {sig(state)} ({optimizer} state) = {sig(per)}",
            f"memory = {sig(parameters)} × {sig(per)} B = {fmt(total, 'B')}",
        ),
        convention="activations, KV-cache and framework buffers not counted",
        extras={"bytes_per_parameter": per, "weights_bytes": parameters * w},
    )


def _kv_v(layers, kv_heads, head_dim, sequence_length, batch_size, precision):
    return (
        2 * layers * kv_heads * head_dim * sequence_length * batch_size * PRECISION_BYTES[precision]
    )


@register(
    name="kv-cache",
    title="KV-cache size",
    topic="memory",
    summary="2 (K and V) × layers × KV heads × head dim × tokens × batch × bytes.",
    params=[
        Param("layers", "Layers", "", "Transformer layers, e.g. 80.", kind="int"),
        Param(
            "kv_heads",
            "KV heads",
            "",
            "Key/value heads (fewer than query heads with GQA).",
            kind="int",
        ),
        Param("head_dim", "Head dimension", "", "e.g. 128.", kind="int"),
        Param(
            "sequence_length",
            "Tokens per sequence",
            "",
            "Context length held, e.g. 8192.",
            kind="int",
        ),
        Param("batch_size", "Batch size", "", "Sequences held at once.", kind="int", default=1),
        PRECISION,
    ],
    result_unit="B",
    vector=_kv_v,
    example={
        "layers": 80,
        "kv_heads": 8,
        "head_dim": 128,
        "sequence_length": 8192,
        "batch_size": 1,
        "precision": "bf16",
    },
)
def kv_cache(
    *,
    layers: int,
    kv_heads: int,
    head_dim: int,
    sequence_length: int,
    batch_size: int,
    precision: str,
) -> Result:
    per = PRECISION_BYTES[precision]
    total = float(_kv_v(layers, kv_heads, head_dim, sequence_length, batch_size, precision))
    return Result(
        "kv-cache",
        total,
        "B",
        "KV-cache",
        "KV = 2 × L × H_kv × d × S × B × bytes",
        (
            f"KV = 2 × {layers} × {kv_heads} × {head_dim} × {sequence_length} × {batch_size} × "
            f"{sig(per)} B",
            f"KV = {fmt(total, 'B')}",
        ),
    )


def _gpus_v(model_bytes, gpu_memory_bytes, usable_fraction):
    return ceil_count(model_bytes / (gpu_memory_bytes * usable_fraction))


@register(
    name="gpus-per-replica",
    title="Minimum GPUs per replica",
    topic="memory",
    summary="The fewest GPUs whose memory holds the model: ceil(bytes / usable memory).",
    params=[
        Param("model_bytes", "Model bytes", "B", "Memory to hold, e.g. 140 GB (70B in FP16)."),
        Param("gpu_memory_bytes", "Memory per GPU", "B", "e.g. 80 GB (H100). Or give gpu."),
        Param(
            "usable_fraction",
            "Usable share",
            "fraction",
            "Share of GPU memory the weights may use (1 = all; leave room for KV-cache with e.g. "
            "0.9).",
            kind="fraction_pos",
            default=1.0,
        ),
    ],
    result_unit="GPUs",
    uses_gpu=True,
    vector=_gpus_v,
    example={"model_bytes": "140 GB", "gpu_memory_bytes": "80 GB"},
)
def gpus_per_replica(
    *, model_bytes: float, gpu_memory_bytes: float, usable_fraction: float
) -> Result:
    usable = gpu_memory_bytes * usable_fraction
    n = int(_gpus_v(model_bytes, gpu_memory_bytes, usable_fraction))
    return Result(
        "gpus-per-replica",
        float(n),
        "GPUs",
        "GPUs per replica",
        "N = ceil(model bytes / usable memory)",
        (
            f"usable memory = {fmt(gpu_memory_bytes, 'B')} × {sig(usable_fraction)} = "
            f"{fmt(usable, 'B')}",
            f"N = ceil({fmt(model_bytes, 'B')} / {fmt(usable, 'B')}) = "
            f"ceil({sig(model_bytes / usable)}) = {n}",
        ),
        classification="fits on one GPU" if n == 1 else f"needs {n}-way model parallelism",
    )
