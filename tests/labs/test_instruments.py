"""Lab 09's instruments against an independent computation from the seed's formulas and
constants (written out here again, not imported), to 1e-9."""

from __future__ import annotations

import itertools
import math

import pytest

from apps.labs.labfile import LabFileError, parse_lab, shipped

LAB = shipped()["lab09-perf-engr"]


def seed_act2(m: int, ar_k: float, workers: int) -> dict[str, float]:
    """The seed's Act II cell, transcribed: 45/30/15/10 profile, PP = 8, m₀ = 4, MFU 35 % capped
    at 60 %, the engineer-week cost model and the 8-week budget."""
    base = {"compute": 0.45, "allreduce": 0.30, "pipeline_bubble": 0.15, "data_loading": 0.10}
    bubble = base["pipeline_bubble"] * (4 / m)
    allreduce = base["allreduce"] / ar_k
    dl = max(1.0, math.sqrt(workers) / math.sqrt(4))
    data = base["data_loading"] / dl
    total = base["compute"] + allreduce + bubble + data
    mfu = min(35.0 * (1.0 / total), 60.0)
    cost = 0.5 + max(0, m - 4) * 0.1
    cost += 0.0 if ar_k == 1.0 else 2.0 + (ar_k - 1.0) * 1.5
    cost += 0.0 if workers <= 4 else 1.0 + (workers - 4) * 0.25
    return {"step": total, "mfu": mfu, "weeks": cost, "over": float(cost > 8.0)}


@pytest.mark.parametrize(
    ("m", "ar_k", "workers"),
    list(itertools.product([1, 4, 8, 16, 32], [1.0, 1.5, 2.0, 4.0], [1, 4, 9, 16])),
)
def test_act_ii_matches_the_seed(m: int, ar_k: float, workers: int) -> None:
    got = LAB.steps[2].run(
        {"microbatches": m, "allreduce_compression": ar_k, "prefetch_workers": workers}
    )
    want = seed_act2(m, ar_k, workers)
    assert got["step_time"] == pytest.approx(want["step"], abs=1e-9)
    assert got["mfu"] == pytest.approx(want["mfu"], abs=1e-9)
    assert got["weeks"] == pytest.approx(want["weeks"], abs=1e-9)
    assert got["over_budget"] is bool(want["over"])


def test_act_ii_over_eight_engineer_weeks_is_the_failure_state() -> None:
    got = LAB.steps[2].run({"microbatches": 8, "allreduce_compression": 4, "prefetch_workers": 8})
    assert got["weeks"] == pytest.approx(0.5 + 0.4 + 2.0 + 4.5 + 1.0 + 1.0)
    assert got["over_budget"] is True
    assert got["target_reached"] is False


def test_act_i_is_the_8_percent_and_the_hotspot_is_allreduce() -> None:
    got = LAB.steps[0].run({"target": "attention", "k": 3})
    assert got["improvement_pct"] == pytest.approx((1 / (0.88 + 0.12 / 3) - 1) * 100, abs=1e-9)
    assert round(got["improvement_pct"], 1) == 8.7
    assert got["hotspot"] == "allreduce"
    assert got["hotspot_improvement_pct"] == pytest.approx((1 / (0.55 + 0.15) - 1) * 100)
    assert sum(got["after"].values()) == pytest.approx(1.0)
    assert LAB.steps[1].answer == pytest.approx(100 * (1 / (0.55 + 0.45 / 3) - 1), abs=1e-9)


def test_a_numeric_key_is_what_the_instrument_gives() -> None:
    """Step 4's key is the instrument's MFU for 16 micro-batches: 35 / (0.45+0.30+0.0375+0.10)."""
    assert LAB.steps[3].answer == pytest.approx(35 / 0.8875, abs=1e-9)


def test_a_broken_lab_file_names_every_problem() -> None:
    bad = """
key: broken
title: Broken
steps:
  - title: one
    prediction: {kind: choice, options: [{key: A, text: yes}], answer: Z}
    instrument: {model: nope}
  - title: two
    prediction: {kind: number, answer: {instrument: mfu}}
    instrument: {same_as: 7}
"""
    with pytest.raises(LabFileError) as err:
        parse_lab(bad)
    text = str(err.value)
    assert "steps[0].instrument.model: 'nope' is not one of" in text
    assert "steps[1].instrument.same_as: no earlier step 7" in text
