"""Parsing quantities, and bad input refused with the field named — never NaN, never a crash."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.perfcalc.calc.core import MAX_MAGNITUDE, MIN_MAGNITUDE, InputError, fmt
from apps.perfcalc.calc.registry import Formula, InputErrors, all_formulas, evaluate_batch, get
from apps.perfcalc.calc.units import UnitError, parse

GOOD = [
    ("3.35 TB/s", "B/s", 3.35e12),
    ("400 Gb/s", "B/s", 50e9),
    ("50GB/s", "B/s", 50e9),
    ("2 TiB/s", "B/s", 2 * 2**40),
    ("16 GB", "B", 16e9),
    ("16 GiB", "B", 16 * 2**30),
    ("512 MB", "B", 512e6),
    ("128 Gb", "B", 16e9),
    ("32 GFLOP", "FLOP", 32e9),
    ("5.88e23", "FLOP", 5.88e23),
    ("1,979 TFLOPS", "FLOP/s", 1979e12),
    ("989.5 TFLOP/s", "FLOP/s", 989.5e12),
    ("2 PFLOPS", "FLOP/s", 2e15),
    ("560 ms", "s", 0.56),
    ("40ms", "s", 0.04),
    ("5 us", "s", 5e-6),
    ("5 µs", "s", 5e-6),
    ("2 min", "s", 120),
    ("8 h", "s", 28800),
    ("30 days", "s", 2_592_000),
    ("500 MWh", "kWh", 500_000),
    ("1 GWh", "kWh", 1e6),
    ("3.6 MJ", "kWh", 1),
    ("700 W", "W", 700),
    ("390 g/kWh", "g/kWh", 390),
    ("35%", "fraction", 0.35),
    ("0.56", "", 0.56),
    ("5.6e-1", "", 0.56),
    ("1,979", "", 1979),
    ("70B", "count", 70e9),
    ("1.4T", "count", 1.4e12),
    ("7e9", "count", 7e9),
    ("−3", "", -3),
    (42, "B", 42),
    (0.5, "fraction", 0.5),
]


@pytest.mark.parametrize(("text", "unit", "expected"), GOOD)
def test_quantities_parse(text: str, unit: str, expected: float) -> None:
    assert parse(text, unit) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "unit", "message"),
    [
        ("560 ms", "B", "'ms' is a time; this field takes bytes"),
        ("3.35 TB/s", "FLOP/s", "'TB/s' is bandwidth"),
        ("16 gb", "B", "ambiguous"),
        ("abc", "B", "not a number"),
        ("", "s", "empty"),
        ("3 parsecs", "s", "unknown unit 'parsecs'"),
        ("1,97,9", "", "not a number"),
        ("..5", "", "not a number"),
        ("E0", "", "not a number"),  # found by hypothesis: an exponent with no mantissa
        ("e5 GB", "B", "not a number"),
    ],
)
def test_bad_quantities_say_why(text: str, unit: str, message: str) -> None:
    with pytest.raises(UnitError, match=message):
        parse(text, unit)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "greater than zero"),
        (-1, "greater than zero"),
        (float("nan"), "not NaN"),
        (float("inf"), "finite"),
        ("NaN GB", "not a number"),
        (1e31, "too large"),
        (True, "number"),
    ],
)
def test_bad_values_name_the_field(value: object, message: str) -> None:
    with pytest.raises(InputErrors) as info:
        get("roofline-time")(
            flops=value, bytes_moved="16 GB", peak_flops_per_s=1e15, bandwidth_bytes_per_s=1e12
        )
    assert message in info.value.as_dict()["flops"][0]


def test_every_bad_field_is_reported_at_once() -> None:
    with pytest.raises(InputErrors) as info:
        get("amdahl")(fraction=1.5, speedup=0.5, surprise=1)
    errors = info.value.as_dict()
    assert errors["fraction"] == ["is a fraction: at most 1 (write 35 % as 0.35)"]
    assert errors["speedup"] == ["is a speed-up factor: at least 1"]
    assert errors["surprise"] == ["is not an input of this formula"]


def test_mfu_over_one_and_fractions_over_one_are_refused() -> None:
    with pytest.raises(InputError, match="mfu"):
        get("iron-law-time")(total_flops=1e20, n_gpus=8, peak_flops_per_s=1e15, mfu=1.2)
    with pytest.raises(InputError, match="whole number"):
        get("pipeline-bubble")(stages=2.5, microbatches=4)


def test_choices_are_checked() -> None:
    with pytest.raises(InputError, match="must be one of: gpipe, megatron, course-lab"):
        get("pipeline-bubble")(stages=8, microbatches=4, convention="1f1b")


# ---- properties over the whole input space


WILD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.text(max_size=12),
    st.sampled_from(["16 GB", "40 ms", "35%", "3.35 TB/s", "70B", "gpipe", "bf16", "exact"]),
    st.none(),
    st.booleans(),
)


def _wild_inputs(f: Formula) -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries({p.name: WILD for p in f.params})


@pytest.mark.parametrize("name", sorted(all_formulas()))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_input_gives_nan_or_an_unexpected_error(name: str, data: st.DataObject) -> None:
    f = get(name)
    raw = data.draw(_wild_inputs(f))
    outcome: object
    try:
        outcome = f(**raw)
    except InputError as exc:
        outcome = exc
    if isinstance(outcome, InputError):
        assert outcome.field
        assert outcome.message
    else:
        assert math.isfinite(outcome.value)  # type: ignore[attr-defined]
        assert outcome.steps  # type: ignore[attr-defined]


POSITIVE = st.floats(min_value=MIN_MAGNITUDE, max_value=MAX_MAGNITUDE, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(flops=POSITIVE, bytes_moved=POSITIVE, peak=POSITIVE, bw=POSITIVE)
def test_roofline_time_is_at_least_both_lower_bounds(
    flops: float, bytes_moved: float, peak: float, bw: float
) -> None:
    r = get("roofline-time")(
        flops=flops, bytes_moved=bytes_moved, peak_flops_per_s=peak, bandwidth_bytes_per_s=bw
    )
    assert r.value >= flops / peak
    assert r.value >= bytes_moved / bw
    assert r.value in {flops / peak, bytes_moved / bw}


@settings(max_examples=200, deadline=None)
@given(
    f=st.one_of(st.just(0.0), st.floats(min_value=MIN_MAGNITUDE, max_value=0.999)),
    k=st.floats(min_value=1, max_value=1e6),
    k2=st.floats(min_value=1, max_value=1e6),
)
def test_amdahl_is_bounded_and_monotone(f: float, k: float, k2: float) -> None:
    s = get("amdahl")(fraction=f, speedup=k).value
    assert 1 <= s <= 1 / (1 - f) * (1 + 1e-12)
    lo, hi = sorted((k, k2))
    assert get("amdahl")(fraction=f, speedup=lo).value <= get("amdahl")(
        fraction=f, speedup=hi
    ).value * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(pp=st.integers(2, 64), m=st.integers(1, 256))
def test_bubbles_shrink_with_more_microbatches(pp: int, m: int) -> None:
    for convention in ("gpipe", "megatron", "course-lab"):
        now = get("pipeline-bubble")(stages=pp, microbatches=m, convention=convention).value
        more = get("pipeline-bubble")(stages=pp, microbatches=m + 1, convention=convention).value
        assert more < now
    assert get("pipeline-bubble")(stages=pp, microbatches=m).value < 1  # gpipe is a share


@settings(max_examples=100, deadline=None)
@given(m=POSITIVE, n=st.integers(2, 100_000), bw=POSITIVE)
def test_ring_allreduce_approaches_but_never_exceeds_2m_over_bw(
    m: float, n: int, bw: float
) -> None:
    r = get("ring-allreduce")(message_bytes=m, n_gpus=n, bandwidth_bytes_per_s=bw)
    assert r.value <= 2 * m / bw * (1 + 1e-12)
    assert r.value >= m / bw * (1 - 1e-12)


@pytest.mark.parametrize("name", sorted(n for n, f in all_formulas().items() if f.vector))
def test_batch_form_matches_the_scalar_form(name: str) -> None:
    f = get(name)
    rng = np.random.default_rng(7)
    example = dict(f.example.items())
    scalar = f(**example)
    numeric = {
        k: v
        for k, v in scalar.inputs.items()
        if f.param(k).kind not in {"choice", "bool", "fractions", "factors"}
    }
    arrays = {
        k: np.full(5, v) * rng.uniform(1.0, 1.2, 5)
        if f.param(k).kind in {"positive"}
        else np.full(5, v)
        for k, v in numeric.items()
    }
    others = {k: v for k, v in scalar.inputs.items() if k not in numeric}
    batch = evaluate_batch(name, {**arrays, **others})
    assert batch.valid.all()
    for i in range(5):
        one = f(**{k: float(a[i]) for k, a in arrays.items()}, **others)
        assert batch.values[i] == pytest.approx(one.value), name


def test_batch_reports_bad_rows_and_computes_the_rest() -> None:
    b = evaluate_batch(
        "roofline-time",
        {
            "flops": [32e9, -1, float("nan"), 1e15],
            "bytes_moved": 16e9,
            "peak_flops_per_s": 1979e12,
            "bandwidth_bytes_per_s": 3.35e12,
        },
    )
    assert list(b.valid) == [True, False, False, True]
    assert b.errors[1] == "flops: out of range or not a number"
    assert b.values[0] == pytest.approx(16e9 / 3.35e12)
    assert not np.isnan(b.values).any()


def test_si_formatting() -> None:
    assert fmt(3.35e12, "B/s") == "3.35 TB/s"
    assert fmt(0.56, "s") == "560 ms"
    assert fmt(0.35, "fraction") == "35 %"
    assert fmt(3.316e6, "s") == "3,316,000 s (38.4 days)"
