"""The training-step planner: a model, 1–8 of the course's 8×H100 nodes (or, at the "cluster"
scale, up to 1,024 nodes: a lab's 512-GPU run), a parallel layout and a batch → memory per GPU
(fits or not), the step time by part, MFU, and where the layout ranks among every feasible
layout of the same GPUs and batch (all of them evaluated at once in numpy).

Memory = model state (`sharded-memory`, bf16 + Adam) + activations (`activation-memory`, sequence
parallel when TP > 1) for the layers of one stage × the micro-batches a 1F1B first stage holds
(min(PP, m)). Time = `step-time` with the catalog's NVLink and course-network figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.core import InputError
from apps.perfcalc.calc.formulas.parallelism import (
    RECOMPUTE,
    ZERO_STAGES,
    _act_per_layer,
    _sharded,
    step_parts,
)
from apps.perfcalc.calc.registry import InputErrors

GPUS_PER_NODE = 8
MAX_NODES = 8  # the course's own nodes: the default scale
CLUSTER_MAX_NODES = 1024  # scale "cluster": a lab's 512-GPU run, or any size a user asks for
SCALES = ("course", "cluster")
GPU = "h100-sxm"
INTRA_LINK = "nvlink4-per-direction"
INTER_LINK = "gcp-a3-high-gpu-nic"
TP_CHOICES = (1, 2, 4, 8)
DEFAULTS: dict[str, Any] = {
    "model": "llama-3-8b",
    "nodes": 1,
    "tp": 1,
    "pp": 1,
    "dp": 8,
    "micro_batch": 1,
    "global_batch": 64,
    "sequence_length": 4096,
    "zero_stage": "1",
    "recompute": "selective",
    "kernel_efficiency": 0.6,
    "scale": "course",
}
PARTS = (
    ("compute_s", "Compute"),
    ("tp_comm_s", "Tensor-parallel AllReduce"),
    ("pp_comm_s", "Pipeline sends"),
    ("dp_comm_s", "Data-parallel AllReduce"),
    ("bubble_s", "Pipeline bubble"),
)


@dataclass
class Plan:
    inputs: dict[str, Any]
    model: catalog.Model
    gpu: catalog.GPU
    memory: dict[str, float]  # weights, gradients, optimizer, activations, total, capacity
    time: dict[str, float]  # PARTS keys + total_s
    mfu: float
    tokens_per_s: float
    microbatches: int
    fits: bool
    rank: int | None  # 1 = fastest feasible layout; None when this one does not fit
    feasible: int
    alternatives: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "model": self.model.key,
            "gpu": self.gpu.key,
            "memory_bytes": self.memory,
            "time_s": self.time,
            "mfu": self.mfu,
            "tokens_per_s": self.tokens_per_s,
            "microbatches": self.microbatches,
            "fits": self.fits,
            "rank": self.rank,
            "feasible_layouts": self.feasible,
            "alternatives": self.alternatives,
        }


def _int(raw: dict[str, Any], name: str, lo: int, hi: int, errors: list[InputError]) -> int:
    value = raw.get(name, DEFAULTS.get(name))
    try:
        number = float(str(value).strip())
    except ValueError:
        errors.append(InputError(name, "must be a whole number"))
        return lo
    if not number.is_integer() or not lo <= number <= hi:
        errors.append(InputError(name, f"must be a whole number from {lo} to {hi:,}"))
        return lo
    return int(number)


def clean(raw: dict[str, Any]) -> dict[str, Any]:
    """Validated planner inputs (defaults for what is missing); InputErrors names each bad field."""
    errors: list[InputError] = []
    out: dict[str, Any] = {}
    model_key = str(raw.get("model") or DEFAULTS["model"])
    if model_key not in catalog.models():
        errors.append(
            InputError("model", f"unknown model; choose one of {', '.join(catalog.models())}")
        )
    out["model"] = model_key
    scale = str(raw.get("scale") or DEFAULTS["scale"])
    if scale not in SCALES:
        errors.append(InputError("scale", "must be course (up to 8 nodes) or cluster"))
        scale = "course"
    out["scale"] = scale
    most = CLUSTER_MAX_NODES if scale == "cluster" else MAX_NODES
    out["nodes"] = _int(raw, "nodes", 1, most, errors)
    if scale == "course" and errors and errors[-1].field == "nodes":
        errors[-1] = InputError(
            "nodes",
            f"must be a whole number from 1 to {MAX_NODES} (the course's nodes); choose the "
            "cluster scale to plan beyond them",
        )
    most_gpus = most * GPUS_PER_NODE
    out["tp"] = _int(raw, "tp", 1, GPUS_PER_NODE, errors)
    out["pp"] = _int(raw, "pp", 1, most_gpus, errors)
    out["dp"] = _int(raw, "dp", 1, most_gpus, errors)
    out["micro_batch"] = _int(raw, "micro_batch", 1, 4096, errors)
    out["global_batch"] = _int(raw, "global_batch", 1, 1_000_000, errors)
    out["sequence_length"] = _int(raw, "sequence_length", 1, 1_048_576, errors)
    for name, options in (("zero_stage", ZERO_STAGES), ("recompute", RECOMPUTE)):
        value = str(raw.get(name) or DEFAULTS[name])
        if value not in options:
            errors.append(InputError(name, f"must be one of: {', '.join(options)}"))
        out[name] = value
    try:
        eff = float(str(raw.get("kernel_efficiency") or DEFAULTS["kernel_efficiency"]).rstrip("%"))
        eff = eff / 100 if str(raw.get("kernel_efficiency", "")).endswith("%") else eff
        if not 0 < eff <= 1:
            raise ValueError
        out["kernel_efficiency"] = eff
    except ValueError:
        errors.append(
            InputError(
                "kernel_efficiency", "must be a fraction above 0 and at most 1, e.g. 0.6 or 60%"
            )
        )
    if not errors:
        gpus = out["nodes"] * GPUS_PER_NODE
        if out["tp"] not in TP_CHOICES:
            errors.append(
                InputError(
                    "tp", "must be 1, 2, 4 or 8 (a tensor-parallel group stays inside a node)"
                )
            )
        if out["tp"] * out["pp"] * out["dp"] != gpus:
            errors.append(
                InputError(
                    "dp",
                    f"TP × PP × DP = {out['tp'] * out['pp'] * out['dp']} must equal the "
                    f"{gpus} GPUs of {out['nodes']} node(s)",
                )
            )
        layers = int(catalog.model(out["model"]).figures["layers"])
        if layers % out["pp"]:
            errors.append(InputError("pp", f"must divide the model's {layers} layers evenly"))
        if out["global_batch"] % (out["dp"] * out["micro_batch"]):
            errors.append(
                InputError(
                    "global_batch",
                    f"must be a multiple of DP × micro-batch = {out['dp'] * out['micro_batch']}",
                )
            )
    if errors:
        raise InputErrors(errors)
    return out


def _evaluate(
    m: catalog.Model, gpu: catalog.GPU, c: dict[str, Any], tp: Any, pp: Any, dp: Any
) -> dict[str, Any]:
    """Memory and time for arrays of layouts (or one)."""
    f = m.figures
    intra = catalog.links()[INTRA_LINK].bandwidth_bytes_per_s
    inter = catalog.links()[INTER_LINK].bandwidth_bytes_per_s
    mb, gb, s = c["micro_batch"], c["global_batch"], c["sequence_length"]
    state_total, state = _sharded(f["parameters"], tp, pp, dp, c["zero_stage"], "bf16-adam")
    per_layer = _act_per_layer(s, mb, f["hidden_size"], f["heads"], tp, True, c["recompute"])
    m_count = gb / (dp * mb)
    in_flight = np.minimum(pp, m_count)
    activations = per_layer * (f["layers"] / pp) * in_flight
    time = step_parts(
        active_parameters=f["active_parameters"],
        parameters=f["parameters"],
        layers=f["layers"],
        hidden_size=f["hidden_size"],
        sequence_length=s,
        global_batch=gb,
        micro_batch=mb,
        tp=tp,
        pp=pp,
        dp=dp,
        gpus_per_node=GPUS_PER_NODE,
        peak_flops_per_s=gpu.peak("bf16"),
        kernel_efficiency=c["kernel_efficiency"],
        intra_bandwidth_bytes_per_s=intra,
        inter_bandwidth_bytes_per_s=inter,
        intra_latency_s=0.0,
        inter_latency_s=0.0,
    )
    total = state_total + activations
    return {"state": state, "activations": activations, "total": total, "time": time}


def plan(raw: dict[str, Any]) -> Plan:
    c = clean(raw)
    m = catalog.model(c["model"])
    gpu = catalog.gpu(GPU)
    one = _evaluate(m, gpu, c, c["tp"], c["pp"], c["dp"])
    capacity = gpu.memory_bytes
    memory = {
        "weights": float(one["state"]["weights_bytes"]),
        "gradients": float(one["state"]["gradients_bytes"]),
        "optimizer": float(one["state"]["optimizer_bytes"]),
        "activations": float(one["activations"]),
        "total": float(one["total"]),
        "capacity": capacity,
    }
    time = {k: float(one["time"][k]) for k, _ in PARTS}
    time["total_s"] = float(one["time"]["total_s"])
    # Every other layout of the same GPUs and batch: TP inside a node, PP dividing the layers.
    gpus = c["nodes"] * GPUS_PER_NODE
    layers = int(m.figures["layers"])
    cands = [
        (tp, pp, gpus // (tp * pp))
        for tp in TP_CHOICES
        for pp in range(1, min(gpus, layers) + 1)
        if gpus % (tp * pp) == 0
        and layers % pp == 0
        and tp <= gpus
        and c["global_batch"] % ((gpus // (tp * pp)) * c["micro_batch"]) == 0
    ]
    arr = np.array(cands, dtype=np.float64)
    every = _evaluate(m, gpu, c, arr[:, 0], arr[:, 1], arr[:, 2])
    ok = np.asarray(every["total"]) <= capacity
    times = np.asarray(every["time"]["total_s"])
    fits = memory["total"] <= capacity
    rank = int(np.sum(ok & (times < time["total_s"] * (1 - 1e-12)))) + 1 if fits else None
    order = [i for i in np.argsort(times, kind="stable") if ok[i]][:5]
    alternatives = [
        {
            "tp": cands[i][0],
            "pp": cands[i][1],
            "dp": cands[i][2],
            "step_s": float(times[i]),
            "memory_bytes": float(every["total"][i]),
            "mfu": float(every["time"]["mfu"][i]),
        }
        for i in order
    ]
    return Plan(
        inputs=c,
        model=m,
        gpu=gpu,
        memory=memory,
        time=time,
        mfu=float(one["time"]["mfu"]),
        tokens_per_s=float(one["time"]["tokens_per_s"]),
        microbatches=int(one["time"]["microbatches"]),
        fits=fits,
        rank=rank,
        feasible=int(ok.sum()),
        alternatives=alternatives,
    )


__all__ = ["DEFAULTS", "PARTS", "RECOMPUTE", "ZERO_STAGES", "InputError", "Plan", "clean", "plan"]
