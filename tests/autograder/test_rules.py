"""The grading core: hundreds of answer formats, tolerance, partial credit, seeds, safe keys."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from apps.autograder.rules import (
    Band,
    KeyError_,
    draw_params,
    evaluate_key,
    parse_answer,
    score_numeric,
    score_two_part,
    seed_for,
)

# value 0.56 s written every way a student might (the quiz's Q4 key)
NUMBERS = ["0.56", ".56", "0.560", "5.6e-1", "5.6E-1", "56e-2", "+0.56", " 0.56 ", "0.56\t"]
SECONDS = [
    ("560 ms", "s"),
    ("560ms", "s"),
    ("0.56 s", "s"),
    ("0.56s", "s"),
    ("0.56 sec", "s"),
    ("560000 us", "s"),
    ("560000 µs", "s"),
]
PERCENT = [
    ("35%", "fraction", 0.35),
    ("35 %", "fraction", 0.35),
    ("0.35", "fraction", 0.35),
    ("3.5e1%", "fraction", 0.35),
]
THOUSANDS = [
    ("1,979", "", 1979.0),
    ("1979", "", 1979.0),
    ("1,979.0", "", 1979.0),
    ("12,345,678", "", 12345678.0),
]
BAD = [
    "abc",
    "0.56 parsecs",
    "1,97,9",
    "--1",
    "0.5.6",
    "e5",
    "½",
    "NaN",
    "inf",
    "five",
    "0.56 s s",
    "(0.56)",
]


@pytest.mark.parametrize(("raw", "pad"), list(itertools.product(NUMBERS, ["", " ", "  "])))
def test_plain_numbers(raw: str, pad: str) -> None:
    p = parse_answer(pad + raw + pad, "")
    assert p.status == "ok"
    assert p.value == pytest.approx(0.56)


@pytest.mark.parametrize(("raw", "unit"), SECONDS)
def test_times_with_units(raw: str, unit: str) -> None:
    assert parse_answer(raw, unit).value == pytest.approx(0.56)


@pytest.mark.parametrize(("raw", "unit", "value"), PERCENT + THOUSANDS)
def test_percent_and_thousands(raw: str, unit: str, value: float) -> None:
    assert parse_answer(raw, unit).value == pytest.approx(value)


@pytest.mark.parametrize("raw", BAD)
def test_anything_else_is_unparseable_and_kept(raw: str) -> None:
    p = parse_answer(raw, "s")
    assert p.status == "unparseable"
    assert p.raw == raw.strip()


@pytest.mark.parametrize("raw", ["1.087x", "1.087 x", "1.087X", "1.087×", " 1.087 × "])
def test_a_speed_up_written_with_x_is_read_as_the_ratio(raw: str) -> None:
    p = parse_answer(raw, "")
    assert p.status == "ok"
    assert p.value == pytest.approx(1.087)


@pytest.mark.parametrize(("raw", "unit"), [("x", ""), ("0x10", ""), ("3 x", "ms"), ("2×", "s")])
def test_an_x_elsewhere_is_still_refused(raw: str, unit: str) -> None:
    assert parse_answer(raw, unit).status == "unparseable"


@pytest.mark.parametrize("raw", ["", "   ", None, "\t"])
def test_blank_is_no_answer(raw: object) -> None:
    assert parse_answer(raw, "").status == "blank"


@pytest.mark.parametrize(
    ("unit", "raw", "value"),
    [
        (u, f"{n} {p}{suffix}", n * f)
        for u, suffix, scale in [("B", "B", 1), ("B/s", "B/s", 1), ("FLOP", "FLOP", 1)]
        for p, f in [("", 1), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)]
        for n in (1, 16, 3.35)
    ],
)
def test_si_prefixes(unit: str, raw: str, value: float) -> None:
    assert parse_answer(raw, unit).value == pytest.approx(value)


BANDS = [Band(1.0, 0.02), Band(0.5, 0.2)]


@pytest.mark.parametrize(
    ("answer", "credit"),
    [
        (0.56, 1.0),
        (0.55125, 1.0),
        (0.562, 1.0),
        (0.5405, 1.0),
        (0.5625, 0.5),
        (0.54, 0.5),
        (0.53, 0.5),
        (0.6, 0.5),
        (0.66, 0.5),
        (0.67, 0.0),
        (0.28, 0.0),
        (np.nan, 0.0),
    ],
)
def test_tolerance_and_partial_credit(answer: float, credit: float) -> None:
    """Key 0.55125 (exact ring AllReduce): within 2 % → full, 20 % → half. 0.56 (the 2M/BW answer)
    is
    1.6 % off: full; 0.5625 and 0.54 are 2.04 % off: half."""
    assert score_numeric(np.array([answer]), np.array([0.55125]), BANDS)[0] == credit


def test_absolute_tolerance_for_a_zero_key() -> None:
    assert list(
        score_numeric(np.array([0.0, 0.001, 0.1]), np.zeros(3), [Band(1.0, 0.02, 0.005)])
    ) == [1.0, 1.0, 0.0]


def test_two_part_rubric_of_q6_and_q7() -> None:
    """2 points both right; 1 for one right, or both within 20 %; else 0 (as fractions of 2)."""
    a = np.array([1.0, 1.0, 0.5, 0.5, 0.0, 0.0])
    b = np.array([1.0, 0.0, 0.5, 0.0, 1.0, 0.0])
    assert list(score_two_part(a, b)) == [1.0, 0.5, 0.5, 0.0, 0.5, 0.0]


def test_seeds_are_reproducible_and_differ_between_students() -> None:
    spec = {
        "n": {"range": [8, 64], "step": 8},
        "gb": {"range": [2, 20], "step": 2},
        "link": {"choice": [25, 50]},
    }
    s1 = seed_for("ee290-sp26", "a1-numbers", "allreduce", "17")
    assert draw_params(spec, s1) == draw_params(spec, s1)
    draws = {
        tuple(
            sorted(
                draw_params(spec, seed_for("ee290-sp26", "a1-numbers", "allreduce", str(i))).items()
            )
        )
        for i in range(50)
    }
    assert len(draws) > 20
    assert all(8 <= dict(d)["n"] <= 64 and dict(d)["n"] % 8 == 0 for d in draws)


def test_adding_a_parameter_keeps_the_others() -> None:
    seed = seed_for("c", "s", "q", "1")
    before = draw_params({"n": {"range": [1, 100]}}, seed)
    after = draw_params({"n": {"range": [1, 100]}, "z": {"choice": [1, 2]}}, seed)
    assert before["n"] == after["n"]


def test_keys_are_safe_expressions_over_the_calculator() -> None:
    assert evaluate_key(
        "ring_allreduce(message_bytes=m, n_gpus=n, bandwidth_bytes_per_s=b)",
        {"m": 14e9, "n": 64, "b": 50e9},
    ) == pytest.approx(0.55125)
    assert (
        evaluate_key("fleet_size(target_qps=1000, qps_per_replica=20, gpus_per_replica=2)", {})
        == 100
    )
    for bad in [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "(1).__class__",
        "m *",
        "1/0",
        "'text'",
    ]:
        with pytest.raises(KeyError_):
            evaluate_key(bad, {"m": 1})
