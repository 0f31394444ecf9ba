"""The statistics against hand-computed small cases and SciPy's own routines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from apps.assessments import stats

PRE = np.array([4.0, 5.0, 6.0, 5.0, 3.0])
POST = np.array([7.0, 8.0, 8.0, 9.0, 6.0])  # differences 3, 3, 2, 4, 3


def test_cohens_d_pooled_by_hand() -> None:
    # means 4.6 and 7.6; sample variances 1.3 and 1.3 → pooled SD √1.3
    assert stats.cohens_d_pooled(PRE, POST) == pytest.approx(3 / math.sqrt(1.3), abs=1e-12)


def test_the_seeds_expected_effect_size() -> None:
    """The seed: a 3-point gain with pre SD 2.5 and post SD 2.0 gives pooled SD ≈ 2.26, d ≈ 1.3
    (the seed rounds the SD to 2.3 and d to 1.2)."""
    pooled = math.sqrt((2.5**2 + 2.0**2) / 2)
    assert pooled == pytest.approx(2.264, abs=1e-3)
    assert 3 / pooled == pytest.approx(1.325, abs=1e-3)


def test_paired_d_and_the_gain_interval_by_hand() -> None:
    diff = POST - PRE  # mean 3, sample SD √0.5
    assert stats.cohens_d_paired(PRE, POST) == pytest.approx(3 / math.sqrt(0.5), abs=1e-12)
    ci = stats.mean_ci(diff)
    half = 2.7764451051977987 * math.sqrt(0.5) / math.sqrt(5)  # t(0.975, 4)
    assert (ci.mean, ci.low, ci.high) == pytest.approx((3, 3 - half, 3 + half), abs=1e-12)


def test_hake_gain_of_class_means() -> None:
    assert stats.hake_gain(4.6, 7.6, 12) == pytest.approx(3 / 7.4, abs=1e-12)
    assert math.isnan(stats.hake_gain(12, 12, 12))


def test_paired_tests_are_scipys() -> None:
    t = stats.paired_tests(PRE, POST)
    ref_t, ref_w = st.ttest_rel(POST, PRE), st.wilcoxon(POST, PRE)
    assert (t.t, t.t_p) == (pytest.approx(ref_t.statistic), pytest.approx(ref_t.pvalue))
    assert (t.wilcoxon_w, t.wilcoxon_p) == (
        pytest.approx(ref_w.statistic),
        pytest.approx(ref_w.pvalue),
    )
    same = stats.paired_tests(PRE, PRE)  # no differences at all: both tests are undefined, said so
    assert same.wilcoxon_w is None
    assert math.isnan(same.t)


def test_bands_follow_the_seed_edges() -> None:
    totals = np.array([0, 3, 3.5, 4, 6, 7, 9, 10, 12, 12])
    assert stats.band_shares(totals, 12) == [30.0, 20.0, 20.0, 30.0]
