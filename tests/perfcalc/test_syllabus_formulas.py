"""The formulas beyond Lecture 2: each against a hand derivation or a published worked example,
the properties the course relies on (hypothesis), and `model=` from the model catalog."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.autograder.rules import draw_params, evaluate_key
from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.core import InputError
from apps.perfcalc.calc.evaluate import evaluate
from apps.perfcalc.calc.formulas.serving import erlang_c
from apps.perfcalc.calc.registry import InputErrors, all_formulas, evaluate_batch, get

BANKS = Path(__file__).resolve().parents[2] / "courses" / "banks"
REL = 1e-12


def test_the_calculator_covers_the_syllabus() -> None:
    assert len(all_formulas()) >= 55
    for name in (
        "all-to-all",
        "double-tree-allreduce",
        "hierarchical-allreduce",
        "p2p-send",
        "reduce-scatter",
        "all-gather",
        "ring-tree-crossover",
        "interleaved-bubble",
        "sharded-memory",
        "activation-memory",
        "step-time",
        "compute-optimal",
        "checkpoint-size",
        "checkpoint-overhead",
        "node-mtbf",
        "prefill-flops",
        "decode-flops",
        "ttft",
        "tpot",
        "paged-kv-cache",
        "mla-kv-cache",
        "kv-max-batch",
        "speculative-decoding",
        "mmc-queue",
        "littles-law",
        "quantized-weights",
        "strong-scaling",
        "usl",
    ):
        f = get(name)
        r = f(**f.example)
        assert r.steps, name
        assert math.isfinite(r.value), name


# ------------------------------------------------------------------ collectives


def test_one_pass_collectives_by_hand() -> None:
    # 1 GB over 8 GPUs at 50 GB/s, α = 500 ns: (7/8) × 20 ms + 7 × 0.5 µs
    for name in ("all-to-all", "reduce-scatter", "all-gather"):
        r = get(name)(message_bytes=1e9, n_gpus=8, bandwidth_bytes_per_s=50e9, latency_s=500e-9)
        assert r.value == pytest.approx(0.0175 + 3.5e-6, rel=REL), name
    # and together reduce-scatter + all-gather are exactly the ring AllReduce
    ring = get("ring-allreduce")(
        message_bytes=1e9, n_gpus=8, bandwidth_bytes_per_s=50e9, latency_s=500e-9
    )
    assert ring.value == pytest.approx(2 * (0.0175 + 3.5e-6), rel=REL)


def test_double_tree_has_ring_bandwidth_and_log_latency() -> None:
    r = get("double-tree-allreduce")(
        message_bytes=1e9, n_gpus=64, bandwidth_bytes_per_s=50e9, latency_s=5e-6
    )
    assert r.value == pytest.approx(2 * 1e9 / 50e9 + 2 * 6 * 5e-6, rel=REL)
    assert (
        get("double-tree-allreduce")(message_bytes=1e9, n_gpus=1, bandwidth_bytes_per_s=50e9).value
        == 0
    )


def test_at_the_crossover_ring_and_tree_take_the_same_time() -> None:
    n, bw, alpha = 64, 50e9, 5e-6
    m = get("ring-tree-crossover")(n_gpus=n, bandwidth_bytes_per_s=bw, latency_s=alpha).value
    assert m == pytest.approx(64 * 50e9 * 5e-6 * (63 - 6), rel=REL)  # 912 MB
    ring = get("ring-allreduce")(
        message_bytes=m, n_gpus=n, bandwidth_bytes_per_s=bw, latency_s=alpha
    ).value
    tree = get("double-tree-allreduce")(
        message_bytes=m, n_gpus=n, bandwidth_bytes_per_s=bw, latency_s=alpha
    ).value
    assert ring == pytest.approx(tree, rel=1e-9)
    small = get("double-tree-allreduce")(
        message_bytes=m / 10, n_gpus=n, bandwidth_bytes_per_s=bw, latency_s=alpha
    )
    assert (
        small.value
        < get("ring-allreduce")(
            message_bytes=m / 10, n_gpus=n, bandwidth_bytes_per_s=bw, latency_s=alpha
        ).value
    )
    with pytest.raises(InputError) as exc:
        get("ring-tree-crossover")(n_gpus=1, bandwidth_bytes_per_s=bw, latency_s=alpha)
    assert exc.value.field == "n_gpus"


def test_hierarchical_allreduce_by_hand_two_nodes() -> None:
    # 14 GB, 2 nodes × 8 GPUs: RS 7/8 × 14 GB / 450 GB/s twice, plus 2 × 1/2 × 1.75 GB / 12.5 GB/s
    r = get("hierarchical-allreduce")(
        message_bytes=14e9,
        nodes=2,
        gpus_per_node=8,
        intra_bandwidth_bytes_per_s=450e9,
        inter_bandwidth_bytes_per_s=12.5e9,
    )
    assert r.value == pytest.approx(2 * (7 / 8) * 14e9 / 450e9 + 1.75e9 / 12.5e9, rel=REL)
    assert "one node this is exactly the ring" in (r.convention or "")


@settings(max_examples=100, deadline=None)
@given(
    m=st.floats(1e3, 1e12),
    g=st.integers(1, 64),
    bw=st.floats(1e8, 1e13),
    alpha=st.one_of(st.just(0.0), st.floats(1e-9, 1e-3)),
)
def test_hierarchical_allreduce_on_one_node_is_the_ring(
    m: float, g: int, bw: float, alpha: float
) -> None:
    hier = get("hierarchical-allreduce")(
        message_bytes=m,
        nodes=1,
        gpus_per_node=g,
        intra_bandwidth_bytes_per_s=bw,
        inter_bandwidth_bytes_per_s=1e9,
        intra_latency_s=alpha,
        inter_latency_s=1.0,
    )
    ring = get("ring-allreduce")(
        message_bytes=m, n_gpus=g, bandwidth_bytes_per_s=bw, latency_s=alpha
    )
    assert hier.value == pytest.approx(ring.value, rel=1e-9, abs=1e-300)


# ------------------------------------------------------------------ parallelism


@pytest.mark.parametrize(
    ("stage", "gb"), [("0", 120.0), ("1", 31.40625), ("2", 16.640625), ("3", 1.875)]
)
def test_zero_paper_figure_1(stage: str, gb: float) -> None:
    """Rajbhandari et al. 2020, Figure 1: 7.5B parameters, DP 64, K = 12."""
    r = get("sharded-memory")(parameters=7.5e9, dp=64, zero_stage=stage)
    assert r.value == pytest.approx(gb * 1e9, rel=REL)


def test_sharded_memory_says_whether_it_fits() -> None:
    over = evaluate("sharded-memory", {"parameters": "70B", "tp": 8, "gpu": "h100-sxm"})
    assert over.value == pytest.approx(70e9 * 16 / 8, rel=REL)
    assert over.classification
    assert over.classification.startswith("does not fit in 80 GB: 60 GB over")
    ok = evaluate(
        "sharded-memory",
        {"parameters": "70B", "tp": 8, "dp": 8, "zero_stage": "3", "gpu": "h100-sxm"},
    )
    assert ok.classification
    assert ok.classification.startswith("fits in 80 GB")


def test_activation_memory_gpt3_layer_korthikanti_table_2() -> None:
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h
    act = get("activation-memory")
    none = act(sequence_length=s, micro_batch=b, hidden_size=h, heads=a, tp=1, recompute="none")
    assert none.value == pytest.approx(sbh * (34 + 5 * a * s / h), rel=REL)
    tp_only = act(
        sequence_length=s, hidden_size=h, heads=a, tp=t, sequence_parallel=False, recompute="none"
    )
    assert tp_only.value == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)), rel=REL)
    sp = act(sequence_length=s, hidden_size=h, heads=a, tp=t, recompute="selective")
    assert sp.value == pytest.approx(sbh * 34 / t, rel=REL)
    full = act(sequence_length=s, hidden_size=h, heads=a, tp=1, recompute="full", layers=96)
    assert full.value == pytest.approx(96 * 2 * sbh, rel=REL)


@settings(max_examples=150, deadline=None)
@given(
    s=st.integers(1, 65536),
    b=st.integers(1, 64),
    h=st.integers(64, 32768),
    a=st.integers(1, 256),
    t=st.sampled_from([1, 2, 4, 8, 16]),
    sp=st.booleans(),
)
def test_recomputation_never_increases_memory(
    s: int, b: int, h: int, a: int, t: int, sp: bool
) -> None:
    values = [
        get("activation-memory")(
            sequence_length=s,
            micro_batch=b,
            hidden_size=h,
            heads=a,
            tp=t,
            sequence_parallel=sp,
            recompute=r,
        ).value
        for r in ("none", "selective", "full")
    ]
    assert values[0] >= values[1] >= values[2] > 0


@settings(max_examples=100, deadline=None)
@given(pp=st.integers(2, 64), m=st.integers(1, 256), v=st.integers(1, 16))
def test_interleaved_bubble_shrinks_with_v_and_equals_the_plain_bubble_at_v_1(
    pp: int, m: int, v: int
) -> None:
    for convention in ("gpipe", "megatron", "course-lab"):
        f = get("interleaved-bubble")
        now = f(stages=pp, microbatches=m, virtual_stages=v, convention=convention).value
        more = f(stages=pp, microbatches=m, virtual_stages=v + 1, convention=convention).value
        assert more < now
        plain = get("pipeline-bubble")(stages=pp, microbatches=m, convention=convention).value
        assert f(
            stages=pp, microbatches=m, virtual_stages=1, convention=convention
        ).value == pytest.approx(plain, rel=REL)


def test_interleaved_bubble_by_hand() -> None:
    # PP 8, m 16, v 2: GPipe share 7 / (32 + 7); Megatron 7 / 32
    f = get("interleaved-bubble")
    assert f(stages=8, microbatches=16, virtual_stages=2).value == pytest.approx(7 / 39, rel=REL)
    assert f(
        stages=8, microbatches=16, virtual_stages=2, convention="megatron"
    ).value == pytest.approx(7 / 32, rel=REL)
    odd = f(stages=8, microbatches=12, virtual_stages=2, convention="megatron")
    assert odd.classification
    assert "multiple of PP" in odd.classification


def test_step_time_parts_add_up_and_a_single_gpu_only_computes() -> None:
    kw = {
        "active_parameters": 8e9,
        "parameters": 8e9,
        "layers": 32,
        "hidden_size": 4096,
        "sequence_length": 2048,
        "global_batch": 16,
        "peak_flops_per_s": 1e15,
        "kernel_efficiency": 0.5,
    }
    one = get("step-time")(**kw)
    assert one.value == pytest.approx(6 * 8e9 * 16 * 2048 / 0.5e15, rel=REL)
    assert one.extras["mfu"] == pytest.approx(0.5, rel=REL)
    many = get("step-time")(**{**kw, "tp": 4, "pp": 2, "dp": 2, "micro_batch": 2})
    parts = sum(
        many.extras[k] for k in ("compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s")
    )
    assert many.value == pytest.approx(parts, rel=REL)
    assert many.extras["bubble_s"] == pytest.approx((2 - 1) / 4 * many.extras["compute_s"], rel=REL)
    with pytest.raises(InputError) as exc:
        get("step-time")(**{**kw, "dp": 3})
    assert exc.value.field == "global_batch"


# ------------------------------------------------------------------ training and reliability


def test_chinchilla_70b_and_1_4t_tokens() -> None:
    r = get("compute-optimal")(flop_budget=5.88e23, tokens_per_parameter=20)
    assert r.value == pytest.approx(70e9, rel=1e-9)
    assert r.extras["tokens"] == pytest.approx(1.4e12, rel=1e-9)


def test_checkpoint_size_overhead_and_mtbf_by_hand() -> None:
    assert get("checkpoint-size")(parameters=70e9).value == pytest.approx(70e9 * 14, rel=REL)
    c, m = 120.0, 8 * 3600.0
    r = get("checkpoint-overhead")(checkpoint_cost_s=c, interval_s=3600, mtbf_s=m)
    assert r.value == pytest.approx(c / 3600 + 3600 / (2 * m), rel=REL)
    best = r.extras["optimal_interval_s"]
    at_best = get("checkpoint-overhead")(checkpoint_cost_s=c, interval_s=best, mtbf_s=m).value
    assert at_best == pytest.approx(math.sqrt(2 * c / m), rel=1e-9)
    assert at_best <= r.value
    node = get("node-mtbf")(
        gpu_mtbf_s=50_000 * 3600, nic_mtbf_s=100_000 * 3600, psu_mtbf_s=100_000 * 3600
    )
    assert node.value == pytest.approx(3600 / (8 / 50_000 + 8 / 100_000 + 2 / 100_000), rel=REL)
    p = get("failure-probability")(job_duration_s=14 * 86400, mtbf_s=50 * 3600)
    assert p.value == pytest.approx(1 - math.exp(-6.72), rel=REL)


# ------------------------------------------------------------------ serving


def test_prefill_and_decode_flops_by_hand() -> None:
    p, L, H, d, S = 8e9, 32, 32, 128, 4096
    causal = get("prefill-flops")(
        active_parameters=p, layers=L, heads=H, head_dim=d, prompt_tokens=S
    )
    assert causal.value == pytest.approx(2 * p * S + 0.5 * 4 * L * S * S * H * d, rel=REL)
    full = get("prefill-flops")(
        active_parameters=p, layers=L, heads=H, head_dim=d, prompt_tokens=S, causal=False
    )
    assert full.value - causal.value == pytest.approx(2 * L * S * S * H * d, rel=1e-9)
    dec = get("decode-flops")(
        active_parameters=p, layers=L, heads=H, head_dim=d, context_length=S, batch_size=4
    )
    assert dec.value == pytest.approx(4 * (2 * p + 4 * L * S * H * d), rel=REL)


def test_ttft_is_compute_bound_and_tpot_memory_bound_for_llama_3_8b() -> None:
    ttft = evaluate("ttft", {"model": "llama-3-8b", "prompt_tokens": 4096, "gpu": "h100-sxm"})
    assert ttft.classification == "compute-bound"
    tpot = evaluate("tpot", {"model": "llama-3-8b", "context_length": 4096, "gpu": "h100-sxm"})
    assert tpot.classification == "memory-bound"
    kv = 2 * 32 * 8 * 128 * 2 * 4096
    assert tpot.value == pytest.approx((8.03e9 * 2 + kv) / 3.35e12, rel=REL)


def test_paged_mla_and_max_batch_by_hand() -> None:
    paged = get("paged-kv-cache")(
        layers=32, kv_heads=8, head_dim=128, sequence_length=1000, page_size=16
    )
    assert paged.value == pytest.approx(2 * 32 * 8 * 128 * 2 * 1008, rel=REL)
    assert paged.extras["waste_fraction"] == pytest.approx(8 / 1008, rel=REL)
    mla = evaluate("mla-kv-cache", {"model": "deepseek-v3", "sequence_length": 1})
    assert mla.value == 61 * (512 + 64) * 2  # 70,272 bytes per token
    batch = evaluate(
        "kv-max-batch", {"model": "llama-3-8b", "sequence_length": 8192, "gpu": "h100-sxm"}
    )
    assert batch.value == math.floor((80e9 * 0.9 - 8.03e9 * 2) / (2 * 32 * 8 * 128 * 2 * 8192))
    with pytest.raises(InputError) as exc:
        evaluate(
            "kv-max-batch", {"model": "llama-3-70b", "sequence_length": 8192, "gpu": "h100-sxm"}
        )
    assert exc.value.field == "gpu_memory_bytes"
    assert "do not fit" in exc.value.message


def test_speculative_decoding_leviathan_eq_1() -> None:
    r = get("speculative-decoding")(acceptance_rate=0.8, draft_tokens=4, draft_cost=0.0)
    assert r.extras["expected_tokens"] == pytest.approx((1 - 0.8**5) / 0.2, rel=REL)
    assert r.value == pytest.approx((1 - 0.8**5) / 0.2, rel=REL)
    costly = get("speculative-decoding")(acceptance_rate=0.8, draft_tokens=4, draft_cost=0.25)
    assert costly.value == pytest.approx((1 - 0.8**5) / 0.2 / 2, rel=REL)
    assert get("speculative-decoding")(acceptance_rate=1, draft_tokens=4).value == 5
    assert get("speculative-decoding")(
        acceptance_rate=0.1, draft_tokens=8, draft_cost=0.5
    ).classification


def test_erlang_c_and_mm1() -> None:
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3, rel=REL)  # textbook: c = 2, A = 1
    lam, mu = 6.0, 10.0
    r = get("mmc-queue")(arrival_rate=lam, service_rate=mu, servers=1)
    assert r.extras["p_wait"] == pytest.approx(lam / mu, rel=1e-12)  # M/M/1: P(wait) = ρ
    assert r.extras["mean_wait_s"] == pytest.approx(lam / (mu * (mu - lam)), rel=1e-12)
    assert r.value == pytest.approx(math.log(0.6 / 0.01) / (mu - lam), rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    c=st.integers(1, 64),
    mu=st.floats(0.1, 100),
    lo=st.floats(0.01, 0.98),
    step=st.floats(0.001, 0.2),
)
def test_queue_wait_rises_with_load_and_saturation_is_refused(
    c: int, mu: float, lo: float, step: float
) -> None:
    hi = min(lo + step, 0.99)
    f = get("mmc-queue")
    light = f(arrival_rate=lo * c * mu, service_rate=mu, servers=c)
    heavy = f(arrival_rate=hi * c * mu, service_rate=mu, servers=c)
    assert light.extras["mean_wait_s"] <= heavy.extras["mean_wait_s"] * (1 + 1e-9)
    assert light.value <= heavy.value * (1 + 1e-9) + 1e-12
    assert math.isfinite(heavy.value)
    for load in (1.0, 1.5):
        with pytest.raises(InputError) as exc:
            f(arrival_rate=load * c * mu, service_rate=mu, servers=c)
        assert exc.value.field == "arrival_rate"
        assert "capacity" in exc.value.message


def test_queue_batch_flags_saturated_rows() -> None:
    b = evaluate_batch(
        "mmc-queue", {"arrival_rate": [80, 100, 120], "service_rate": 10, "servers": 10}
    )
    assert list(b.valid) == [True, False, False]
    assert b.errors[1]
    assert "saturation" in b.errors[1]
    assert all(math.isfinite(v) for v in b.extras["p99_wait_s"])


def test_littles_law_quantized_weights_strong_scaling_and_usl() -> None:
    little = get("littles-law")(arrival_rate=200, latency_s=2.5, concurrency_per_replica=32)
    assert little.value == 500
    assert little.extras["replicas"] == 16
    q = get("quantized-weights")(parameters=70e9, quant_format="int4", group_size=128)
    assert q.value == pytest.approx(70e9 * 4.125 / 8, rel=REL)
    asym = get("quantized-weights")(
        parameters=70e9, quant_format="int4", group_size=64, zero_point=True
    )
    assert asym.extras["bits_per_weight"] == pytest.approx(4 + 32 / 64, rel=REL)
    s = get("strong-scaling")(n_gpus=64, comm_fraction=0.02)
    assert s.value == pytest.approx(64 / (1 + 0.02 * 63), rel=REL)
    assert s.extras["half_efficiency_gpus"] == pytest.approx(51, rel=REL)
    u = get("usl")(n=32, sigma=0.05, kappa=0.001)
    best = u.extras["optimal_n"]
    assert best == pytest.approx(math.sqrt(0.95 / 0.001), rel=REL)
    peak = get("usl")(n=best, sigma=0.05, kappa=0.001).value
    assert peak >= get("usl")(n=best * 1.1, sigma=0.05, kappa=0.001).value
    assert peak >= get("usl")(n=best * 0.9, sigma=0.05, kappa=0.001).value


# ------------------------------------------------------------------ the model catalog


def test_every_model_cites_a_source_and_has_the_dimensions() -> None:
    for m in catalog.models().values():
        assert m.source
        assert m.name
        for f in (
            "parameters",
            "active_parameters",
            "layers",
            "hidden_size",
            "heads",
            "kv_heads",
            "head_dim",
            "vocab_size",
        ):
            assert (m.get(f) or 0) > 0, (m.key, f)
        assert m.get("active_parameters") <= m.get("parameters")  # type: ignore[operator]
        assert m.is_moe == bool(m.get("experts"))
    assert {"llama-3-8b", "llama-3-70b", "mixtral-8x7b", "deepseek-v3", "nemotron-4-340b"} <= set(
        catalog.models()
    )
    assert catalog.model("deepseek-v3").is_mla
    assert catalog.model("mixtral-8x7b").is_moe


def test_model_fills_dimensions_and_says_which() -> None:
    r = evaluate("kv-cache", {"model": "llama-3-70b", "sequence_length": 8192})
    assert r.value == 2 * 80 * 8 * 128 * 8192 * 2
    assert r.steps[0].startswith("Llama 3 70B: layers 80, KV heads 8, head dim 128 (source: ")
    typed = evaluate("kv-cache", {"model": "llama-3-70b", "sequence_length": 8192, "layers": 40})
    assert typed.value == r.value / 2  # what the caller typed wins
    moe = evaluate("training-flops", {"model": "mixtral-8x7b", "tokens": 1e12})
    assert moe.value == pytest.approx(6 * 12.9e9 * 1e12, rel=REL)  # active parameters, named
    assert "active parameters per token 12.9B" in moe.steps[0]


def test_model_errors_name_the_field() -> None:
    with pytest.raises(InputErrors) as exc:
        evaluate("mla-kv-cache", {"model": "llama-3-8b", "sequence_length": 100})
    assert "Llama 3 8B has no KV latent (MLA)" in exc.value.as_dict()["model"][0]
    with pytest.raises(InputErrors) as exc:
        evaluate("amdahl", {"model": "llama-3-8b", "fraction": 0.5, "speedup": 2})
    assert exc.value.as_dict() == {"model": ["this formula takes no model"]}
    with pytest.raises(InputErrors) as exc:
        evaluate("kv-cache", {"model": "gpt-9", "sequence_length": 100})
    assert "unknown model" in exc.value.as_dict()["model"][0]


# ------------------------------------------------------------------ the autograder's banks


@pytest.mark.parametrize("path", sorted(BANKS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_bank_key_computes_for_every_student(path: Path) -> None:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    for q in spec["questions"]:
        for part in q.get("parts", []):
            for student in range(30):
                params = draw_params(q.get("params", {}), seed=1000 + student)
                q["prompt"].format(**params)
                for key in ("answer", "max"):
                    if key in part:
                        assert math.isfinite(evaluate_key(part[key], params)), (
                            path.stem,
                            q["key"],
                            key,
                        )
