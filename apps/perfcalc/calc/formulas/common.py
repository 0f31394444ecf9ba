"""Parameters several formulas share, so their help text is written once."""

from __future__ import annotations

import numpy as np

from apps.perfcalc.calc.registry import Param

PEAK = Param(
    "peak_flops_per_s",
    "Peak compute",
    "FLOP/s",
    "The GPU's peak at the precision used, e.g. 989 TFLOPS (H100 SXM BF16, dense). "
    "Or give gpu + precision to take it from the catalog.",
)
BANDWIDTH = Param(
    "bandwidth_bytes_per_s",
    "Memory bandwidth",
    "B/s",
    "HBM bandwidth, e.g. 3.35 TB/s (H100 SXM). Or give gpu to take it from the catalog.",
)
PRECISION_BYTES = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}
WEIGHT_PRECISIONS = tuple(PRECISION_BYTES)
TRAINING_PRECISIONS = ("bf16", "fp16", "fp32")
PRECISION = Param(
    "precision",
    "Precision",
    "",
    "Number format of the weights: bytes per parameter "
    "fp32/tf32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.",
    kind="choice",
    default="bf16",
    choices=tuple(PRECISION_BYTES),
)
PARAMETERS = Param(
    "parameters", "Parameters", "count", "Model parameters, e.g. 70B or 7e9.", kind="positive"
)


def ceil_count(x: np.ndarray | float) -> np.ndarray:
    """Whole units needed for a ratio, forgiving float noise (2.0000000001 → 2)."""
    return np.ceil(np.asarray(x) * (1 - 1e-12))
