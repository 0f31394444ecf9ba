"""Known answers: every numeric item of the MLSys·im quiz and the lab's Amdahl and MFU numbers.

Each test's docstring is the hand derivation the expected value comes from.
"""

from __future__ import annotations

import pytest

from apps.perfcalc.calc.evaluate import evaluate
from apps.perfcalc.calc.registry import get


def test_q1_decode_at_batch_1_is_memory_bound() -> None:
    """Compute 32e9 / 1979e12 = 16.2 µs; memory 16e9 / 3.35e12 = 4.78 ms; 4.78 ms > 16.2 µs,
    AI = 2 FLOP/B far below the ridge 1979/3.35 = 591 FLOP/B: memory-bound, answer (b)."""
    r = get("roofline-time")(
        flops="32 GFLOP",
        bytes_moved="16 GB",
        peak_flops_per_s="1979 TFLOPS",
        bandwidth_bytes_per_s="3.35 TB/s",
    )
    assert r.classification == "memory-bound"
    assert r.value == pytest.approx(16e9 / 3.35e12)
    assert r.extras["compute_time_s"] == pytest.approx(32e9 / 1979e12)
    assert r.extras["ridge_point"] == pytest.approx(590.75, rel=1e-4)
    assert "memory-bound" in r.steps[-1]


def test_q2_a100_to_h100_speedup_is_the_bandwidth_ratio() -> None:
    """Both GPUs are memory-bound at batch 1, so speed-up = 3.35 / 2.0 = 1.675 ≈ 1.7×, answer (a);
    the FLOPS ratio 1979 / 624 = 3.17 is distractor (b)."""
    r = get("decode-speedup")(
        model_bytes="16 GB",
        flops_per_token="32 GFLOP",
        peak_a_flops_per_s="624 TFLOPS",
        bandwidth_a_bytes_per_s="2.0 TB/s",
        peak_b_flops_per_s="1979 TFLOPS",
        bandwidth_b_bytes_per_s="3.35 TB/s",
    )
    assert r.value == pytest.approx(1.675)
    assert r.classification == "memory-bound on both"
    assert "not the FLOPS ratio 3.171×" in r.steps[-1]


def test_q4_ring_allreduce_exact_and_the_quiz_approximation() -> None:
    """Exact: 2·(64−1)/64 · 14e9 / 50e9 = 1.96875 × 0.28 s = 0.55125 s.
    The quiz's key uses the large-N form 2·M/BW = 2 × 14e9 / 50e9 = 0.56 s, answer (b)."""
    exact = get("ring-allreduce")(
        message_bytes="14 GB", n_gpus=64, bandwidth_bytes_per_s="400 Gb/s"
    )
    approx = get("ring-allreduce")(
        message_bytes="14 GB", n_gpus=64, bandwidth_bytes_per_s="50 GB/s", convention="approx-2m-bw"
    )
    assert exact.value == pytest.approx(0.55125)
    assert approx.value == pytest.approx(0.56)
    assert exact.convention == "exact"
    assert approx.convention == "approx-2m-bw"
    assert exact.extras["approx_s"] == pytest.approx(0.56)


@pytest.mark.parametrize(("precision", "gb", "gpus"), [("fp16", 140, 2), ("int4", 35, 1)])
def test_q5_gpus_per_replica_for_70b(precision: str, gb: float, gpus: int) -> None:
    """FP16: 70e9 × 2 B = 140 GB > 80 GB → ceil(1.75) = 2 GPUs; INT4: 70e9 × 0.5 B = 35 GB →
    1 GPU. Answer (a)."""
    memory = get("model-memory")(parameters="70B", precision=precision)
    assert memory.value == pytest.approx(gb * 1e9)
    assert get("gpus-per-replica")(model_bytes=memory.value, gpu_memory_bytes="80 GB").value == gpus


@pytest.mark.parametrize(("qps", "per_replica", "expected"), [(25, 1, 40), (20, 2, 100)])
def test_q6_fleet_sizes(qps: float, per_replica: int, expected: int) -> None:
    """INT4: 1000 / 25 = 40 replicas × 1 GPU = 40. FP16: 1000 / 20 = 50 replicas × 2 GPUs = 100."""
    r = get("fleet-size")(target_qps=1000, qps_per_replica=qps, gpus_per_replica=per_replica)
    assert r.value == expected


@pytest.mark.parametrize(("intensity", "tonnes"), [(390, 195.0), (1.2, 0.6)])
def test_q7_carbon_by_grid(intensity: float, tonnes: float) -> None:
    """Virginia: 500,000 kWh × 390 g/kWh = 195,000,000 g = 195 t.
    Quebec: 500,000 kWh × 1.2 g/kWh = 600,000 g = 0.6 t."""
    r = get("carbon")(energy_kwh="500 MWh", carbon_intensity_g_per_kwh=intensity)
    assert r.value == pytest.approx(tonnes)
    assert r.unit == "t"


def test_q9_required_bandwidth() -> None:
    """16 GB read per token within 40 ms: 16e9 / 0.040 = 400e9 B/s = 400 GB/s, answer (a)."""
    r = get("required-bandwidth")(model_bytes="16 GB", latency_s="40 ms")
    assert r.value == pytest.approx(400e9)
    assert r.display == "400 GB/s"


def test_q10_which_gpus_meet_400_gbs() -> None:
    """A100 2,039 GB/s, L40S 864 GB/s, A10 600 GB/s ≥ 400 GB/s; T4 320 GB/s < 400. Memory: all of
    A100/L40S/A10 hold 16 GB. Answer (a): A100, L40S and A10."""
    r = get("gpus-meeting-target")(model_bytes="16 GB", latency_s="40 ms")
    meets = {row["gpu"]: row["meets"] for row in r.extras["gpus"]}
    assert meets["a100-80gb"]
    assert meets["l40s"]
    assert meets["a10"]
    assert not meets["t4"]
    t4 = next(row for row in r.extras["gpus"] if row["gpu"] == "t4")
    assert not t4["meets_bandwidth"]
    assert t4["fits_memory"]
    assert "NVIDIA T4 16GB (bandwidth 320 GB/s too low)" in r.steps[-1]


def test_lab_attention_kernel_amdahl() -> None:
    """A 3× faster kernel on 12 % of step time: 1 / (0.88 + 0.12/3) = 1 / 0.92 = 1.087 → +8.7 %;
    ceiling 1 / 0.88 = 1.136."""
    r = get("amdahl")(fraction="12%", speedup=3)
    assert r.value == pytest.approx(1 / 0.92)
    assert r.extras["gain"] == pytest.approx(0.0870, abs=1e-4)
    assert r.extras["ceiling"] == pytest.approx(1 / 0.88)


def test_lab_allreduce_amdahl() -> None:
    """Halving AllReduce at 45 % of step time: 1 / (0.55 + 0.45/2) = 1 / 0.775 = 1.290 → +29 %."""
    assert get("amdahl")(fraction=0.45, speedup=2).value == pytest.approx(1 / 0.775)


def test_lab_multi_component_amdahl() -> None:
    """Profile 45/30/15/10 %, AllReduce 2× and bubble 2× faster:
    new time = 0.45 + 0.30/2 + 0.15/2 + 0.10 = 0.775 → 1.290×."""
    r = get("amdahl-multi")(fractions=[0.45, 0.30, 0.15, 0.10], speedups=[1, 2, 2, 1])
    assert r.value == pytest.approx(1 / 0.775)


def test_lab_mfu_effective_flops() -> None:
    """35 % MFU of 1,979 TFLOPS = 692.65 TFLOPS delivered per GPU (the lab's 693)."""
    r = get("effective-flops")(peak_flops_per_s="1979 TFLOPS", mfu="35%")
    assert r.value == pytest.approx(692.65e12)
    assert r.display == "692.7 TFLOP/s"


def test_mfu_from_throughput() -> None:
    """7B model at 3,000 tokens/s on 8 GPUs of 989.5 TFLOPS:
    6 × 7e9 × 3000 = 1.26e14 FLOP/s; / (8 × 989.5e12) = 1.592 %."""
    r = get("mfu")(tokens_per_s=3000, parameters="7B", n_gpus=8, peak_flops_per_s="989.5 TFLOPS")
    assert r.value == pytest.approx(1.26e14 / (8 * 989.5e12))
    assert r.classification is None
    too_fast = get("mfu")(
        tokens_per_s=3e6, parameters="7B", n_gpus=8, peak_flops_per_s="989.5 TFLOPS"
    )
    assert too_fast.value > 1
    assert "impossible" in (too_fast.classification or "")


@pytest.mark.parametrize(
    ("convention", "expected"),
    [("gpipe", 7 / 11), ("megatron", 7 / 4), ("course-lab", 7 / 32)],
)
def test_pipeline_bubble_pp8_m4_under_each_convention(convention: str, expected: float) -> None:
    """PP = 8, m = 4. gpipe: (8−1)/(4+8−1) = 7/11 = 0.636; megatron: (8−1)/4 = 1.75;
    course-lab: (8−1)/(8·4) = 7/32 = 0.219 (the lab's B_base)."""
    r = get("pipeline-bubble")(stages=8, microbatches=4, convention=convention)
    assert r.value == pytest.approx(expected)
    assert r.convention == convention
    assert set(r.extras["conventions"]) == {"gpipe", "megatron", "course-lab"}


def test_the_default_bubble_convention_is_gpipe() -> None:
    assert get("pipeline-bubble")(stages=8, microbatches=4).convention == "gpipe"


def test_catalog_h100_uses_dense_unless_sparse_is_asked() -> None:
    """Dense BF16 on H100 SXM is 989.5 TFLOPS; 1,979 is the 2:4-sparse figure."""
    dense = evaluate("ridge-point", {"gpu": "h100-sxm"})
    sparse = evaluate("ridge-point", {"gpu": "h100-sxm", "sparse": True})
    assert dense.value == pytest.approx(989.5e12 / 3.35e12)
    assert sparse.value == pytest.approx(1979e12 / 3.35e12)
    assert "BF16 dense peak 989.5 TFLOP/s" in dense.steps[0]
    assert "source: NVIDIA H100" in dense.steps[0]
