"""Known answers for the formulas the quiz does not cover, each derived by hand."""

from __future__ import annotations

import pytest

from apps.perfcalc.calc.registry import all_formulas, get


def test_every_formula_has_an_example_that_computes() -> None:
    for name, f in all_formulas().items():
        r = f(**f.example)
        assert r.formula == name
        assert r.steps, name
        assert r.equation, name


def test_arithmetic_intensity_and_ridge() -> None:
    """2·4096³ FLOP over 3·4096²·2 B (bf16 GEMM) = 1365.3 FLOP/B; H100 ridge 989.5/3.35 = 295.4."""
    n = 4096
    assert get("arithmetic-intensity")(
        flops=2 * n**3, bytes_moved=3 * n * n * 2
    ).value == pytest.approx(n / 3)
    assert get("ridge-point")(
        peak_flops_per_s=989.5e12, bandwidth_bytes_per_s=3.35e12
    ).value == pytest.approx(295.37, rel=1e-4)


def test_a_big_gemm_is_compute_bound() -> None:
    """AI 1365 > ridge 295 → time = 2·4096³ / 989.5e12 = 138.9 µs."""
    n = 4096
    r = get("roofline-time")(
        flops=2 * n**3,
        bytes_moved=3 * n * n * 2,
        peak_flops_per_s=989.5e12,
        bandwidth_bytes_per_s=3.35e12,
    )
    assert r.classification == "compute-bound"
    assert r.value == pytest.approx(2 * n**3 / 989.5e12)


def test_decode_step_batch_shares_the_weight_read() -> None:
    """16 GB at 3.35 TB/s = 4.776 ms per step whether batch is 1 or 64 (64 × 32 GFLOP / 989.5 TFLOPS
    = 2.07 ms < 4.776 ms), so tokens/s grows 64×."""
    one = get("decode-step-time")(
        model_bytes="16 GB",
        flops_per_token="32 GFLOP",
        peak_flops_per_s="989.5 TFLOPS",
        bandwidth_bytes_per_s="3.35 TB/s",
    )
    many = get("decode-step-time")(
        model_bytes="16 GB",
        flops_per_token="32 GFLOP",
        batch_size=64,
        peak_flops_per_s="989.5 TFLOPS",
        bandwidth_bytes_per_s="3.35 TB/s",
    )
    assert one.value == pytest.approx(many.value)
    assert many.extras["tokens_per_s"] == pytest.approx(64 * one.extras["tokens_per_s"])


def test_training_memory_mixed_precision_adam_is_16_bytes_per_parameter() -> None:
    """bf16 weights 2 + grads 2 + fp32 master 4 + Adam m 4 + v 4 = 16 B; 7B → 112 GB."""
    r = get("training-memory")(parameters="7B")
    assert r.value == pytest.approx(112e9)
    assert r.extras["bytes_per_parameter"] == 16
    assert get("training-memory")(
        parameters="7B", optimizer="sgd", precision="fp32"
    ).value == pytest.approx(56e9)


def test_kv_cache_llama_70b_like() -> None:
    """2 × 80 layers × 8 KV heads × 128 × 8192 tokens × 2 B = 2,684,354,560 B ≈ 2.68 GB."""
    r = get("kv-cache")(layers=80, kv_heads=8, head_dim=128, sequence_length=8192)
    assert r.value == 2 * 80 * 8 * 128 * 8192 * 2


def test_gpus_per_replica_exact_fit_is_not_rounded_up() -> None:
    """160 GB on 80 GB GPUs is exactly 2, not 3."""
    assert get("gpus-per-replica")(model_bytes="160 GB", gpu_memory_bytes="80 GB").value == 2
    assert (
        get("gpus-per-replica")(
            model_bytes="160 GB", gpu_memory_bytes="80 GB", usable_fraction=0.9
        ).value
        == 3
    )


def test_tree_allreduce() -> None:
    """64 GPUs: depth 6; 2 × 6 × (14e9/50e9) = 3.36 s (unpipelined)."""
    r = get("tree-allreduce")(message_bytes="14 GB", n_gpus=64, bandwidth_bytes_per_s="50 GB/s")
    assert r.value == pytest.approx(3.36)
    assert "not pipelined" in (r.convention or "")


def test_ring_latency_term() -> None:
    """8 GPUs, 1 GB, 100 GB/s, α = 10 µs: 2·7/8·0.01 s + 2·7·10 µs = 17.5 ms + 0.14 ms."""
    r = get("ring-allreduce")(
        message_bytes="1 GB", n_gpus=8, bandwidth_bytes_per_s="100 GB/s", latency_s="10 us"
    )
    assert r.value == pytest.approx(0.0175 + 0.00014)


def test_training_flops_and_iron_law() -> None:
    """70B × 1.4T tokens × 6 = 5.88e23 FLOP; on 512 × 989.5 TFLOPS at 35 % MFU:
    5.88e23 / (512 × 989.5e12 × 0.35) = 3.316e6 s = 38.4 days."""
    c = get("training-flops")(parameters="70B", tokens="1.4T").value
    assert c == pytest.approx(5.88e23)
    t = get("iron-law-time")(total_flops=c, n_gpus=512, peak_flops_per_s="989.5 TFLOPS", mfu=0.35)
    assert t.value == pytest.approx(5.88e23 / (512 * 989.5e12 * 0.35))
    assert t.extras["days"] == pytest.approx(38.38, abs=0.01)
    assert get("inference-flops")(parameters="16B").value == pytest.approx(32e9)


def test_energy() -> None:
    """512 GPUs × 700 W × 30 days × PUE 1.2 = 512 × 700 × 2,592,000 × 1.2 / 3.6e6 = 309,658 kWh."""
    r = get("energy")(n_devices=512, power_watts="700 W", duration_s="30 days", pue=1.2)
    assert r.value == pytest.approx(512 * 700 * 2_592_000 * 1.2 / 3.6e6)


def test_carbon_with_pue() -> None:
    """500 MWh × PUE 1.1 × 390 g/kWh = 214.5 t."""
    assert get("carbon")(
        energy_kwh="500 MWh", carbon_intensity_g_per_kwh=390, pue=1.1
    ).value == pytest.approx(214.5)


def test_gustafson_roi_young_daly_mtbf() -> None:
    """Gustafson 64 − 0.05·63 = 60.85. ROI 8.2 / 3 = 2.733. Young–Daly √(2·120·28800) = 2629 s.
    Cluster MTBF 50,000 h / 512 = 97.66 h."""
    assert get("gustafson")(scale=64, serial_fraction=0.05).value == pytest.approx(60.85)
    assert get("optimization-roi")(gain=8.2, engineer_weeks=3).value == pytest.approx(8.2 / 3)
    assert get("young-daly")(checkpoint_cost_s="2 min", mtbf_s="8 h").value == pytest.approx(
        (2 * 120 * 28800) ** 0.5
    )
    assert get("cluster-mtbf")(component_mtbf_s="50000 h", n_components=512).value == pytest.approx(
        50000 * 3600 / 512
    )


def test_required_flops() -> None:
    assert get("required-flops")(flops="32 GFLOP", latency_s="40 ms").value == pytest.approx(800e9)


def test_amdahl_multi_refuses_fractions_that_do_not_add_up() -> None:
    from apps.perfcalc.calc.core import InputError

    with pytest.raises(InputError, match="add up to 1"):
        get("amdahl-multi")(fractions=[0.5, 0.3], speedups=[2, 2])
    with pytest.raises(InputError, match="one speed-up per fraction"):
        get("amdahl-multi")(fractions=[0.5, 0.5], speedups=[2])
