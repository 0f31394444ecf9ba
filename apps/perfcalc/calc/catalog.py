"""The hardware catalog (catalog.yaml), loaded once. Every figure carries its source."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from apps.perfcalc.calc.core import InputError

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    source: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    tdp_w: float
    peaks: dict[str, dict[str, float] | None]  # precision → {"dense": FLOP/s, "sparse": FLOP/s}
    custom: bool = False

    def peak(self, precision: str, *, sparse: bool = False) -> float:
        """Peak FLOP/s at `precision`, dense unless `sparse`. Raises InputError if the part
        has no such mode."""
        modes = self.peaks.get(precision)
        kind = "sparse" if sparse else "dense"
        if not modes or kind not in modes:
            raise InputError(
                "precision", f"{self.name} has no {kind} {precision.upper()} peak in the catalog"
            )
        return modes[kind]


@dataclass(frozen=True)
class Link:
    key: str
    name: str
    bandwidth_bytes_per_s: float
    direction: str
    source: str


@cache
def _load() -> tuple[dict[str, GPU], dict[str, Link]]:
    data = yaml.safe_load((Path(__file__).with_name("catalog.yaml")).read_text(encoding="utf-8"))
    gpus = {
        key: GPU(
            key=key,
            name=g["name"],
            source=g["source"],
            memory_bytes=g["memory_gb"] * 1e9,
            bandwidth_bytes_per_s=g["bandwidth_gbs"] * 1e9,
            tdp_w=float(g["tdp_w"]),
            peaks={
                p: ({k: v * 1e12 for k, v in modes.items()} if modes else None)
                for p, modes in g["peaks_tflops"].items()
            },
        )
        for key, g in data["gpus"].items()
    }
    links = {
        key: Link(key, x["name"], x["bandwidth_gbs"] * 1e9, x["direction"], x["source"])
        for key, x in data["links"].items()
    }
    return gpus, links


def gpus() -> dict[str, GPU]:
    return _load()[0]


def links() -> dict[str, Link]:
    return _load()[1]


def gpu(key: str) -> GPU:
    found = gpus().get(key)
    if found is None:
        raise InputError("gpu", f"unknown GPU {key!r}; choose one of {', '.join(gpus())}")
    return found


# ------------------------------------------------------------------ models

MODEL_FIELDS = (
    "parameters",
    "active_parameters",
    "layers",
    "hidden_size",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn_size",
    "vocab_size",
    "experts",
    "active_experts",
    "kv_lora_rank",
    "rope_head_dim",
)
FIELD_WORDS = {
    "parameters": "parameters",
    "active_parameters": "active parameters per token",
    "layers": "layers",
    "hidden_size": "hidden size",
    "heads": "attention heads",
    "kv_heads": "KV heads",
    "head_dim": "head dim",
    "ffn_size": "FFN size",
    "vocab_size": "vocabulary",
    "experts": "experts",
    "active_experts": "experts per token",
    "kv_lora_rank": "KV latent (MLA)",
    "rope_head_dim": "RoPE key dim (MLA)",
}


@dataclass(frozen=True)
class Model:
    key: str
    name: str
    source: str
    figures: dict[str, float]  # MODEL_FIELDS the model has (dense models have no experts)

    def get(self, field: str) -> float | None:
        return self.figures.get(field)

    @property
    def is_moe(self) -> bool:
        return bool(self.figures.get("experts"))

    @property
    def is_mla(self) -> bool:
        return bool(self.figures.get("kv_lora_rank"))


@cache
def models() -> dict[str, Model]:
    data = yaml.safe_load((Path(__file__).with_name("models.yaml")).read_text(encoding="utf-8"))
    return {
        key: Model(
            key,
            m["name"],
            m["source"],
            {f: float(m[f]) for f in MODEL_FIELDS if m.get(f) is not None},
        )
        for key, m in data["models"].items()
    }


def model(key: str) -> Model:
    found = models().get(key)
    if found is None:
        raise InputError("model", f"unknown model {key!r}; choose one of {', '.join(models())}")
    return found
