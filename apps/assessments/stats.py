"""The pre/post statistics as pure functions over arrays (SciPy for the distributions and tests).

Conventions, named wherever they are shown:
- Cohen's d (pooled): (mean post − mean pre) / √((s²pre + s²post) / 2), sample SDs — the seed's
  "3-point gain with pooled SD ≈ 2.3 gives d ≈ 1.2".
- d for paired samples (d_z): mean of the differences / their sample SD.
- Hake's normalised gain ⟨g⟩ of class means: (post − pre) / (max − pre), from the means.
- Mean gain with a 95 % confidence interval from Student's t with n − 1 degrees of freedom.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    pass

MIN_GROUP = 5  # aggregates over fewer participants are suppressed


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float


def mean_ci(values: np.ndarray, level: float = 0.95) -> Interval:
    from scipy import stats as st  # loaded when used: scipy.stats takes ~1 s to import

    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    m = float(np.mean(x))
    if n < 2:
        return Interval(m, math.nan, math.nan)
    half = float(st.t.ppf(0.5 + level / 2, n - 1) * st.sem(x))
    return Interval(m, m - half, m + half)


def cohens_d_pooled(pre: np.ndarray, post: np.ndarray) -> float:
    sd = math.sqrt((float(np.var(pre, ddof=1)) + float(np.var(post, ddof=1))) / 2)
    return (float(np.mean(post)) - float(np.mean(pre))) / sd if sd > 0 else math.nan


def cohens_d_paired(pre: np.ndarray, post: np.ndarray) -> float:
    diff = np.asarray(post, dtype=np.float64) - np.asarray(pre, dtype=np.float64)
    sd = float(np.std(diff, ddof=1))
    return float(np.mean(diff)) / sd if sd > 0 else math.nan


def hake_gain(pre_mean: float, post_mean: float, max_points: float) -> float:
    return (post_mean - pre_mean) / (max_points - pre_mean) if max_points > pre_mean else math.nan


@dataclass(frozen=True)
class PairedTests:
    t: float
    t_p: float
    wilcoxon_w: float | None
    wilcoxon_p: float | None


def paired_tests(pre: np.ndarray, post: np.ndarray) -> PairedTests:
    """Paired t and Wilcoxon signed-rank; both undefined (None) when no participant changed."""
    from scipy import stats as st  # loaded when used: scipy.stats takes ~1 s to import

    if not np.any(np.asarray(post) - np.asarray(pre)):
        return PairedTests(math.nan, math.nan, None, None)
    with (
        warnings.catch_warnings()
    ):  # identical differences: t is undefined (nan, shown as —), not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        t = st.ttest_rel(post, pre)
        try:
            w = st.wilcoxon(post, pre)
            ww, wp = float(w.statistic), float(w.pvalue)
        except ValueError:
            ww, wp = None, None
    return PairedTests(float(t.statistic), float(t.pvalue), ww, wp)


BANDS = ((0, 3), (4, 6), (7, 9), (10, 12))


def band_shares(totals: np.ndarray, max_points: float) -> list[float]:
    """Percent of totals in the seed's bands 0–3, 4–6, 7–9, 10–12 (scaled to the quiz's maximum
    when it is not 12; a total between two bands goes to the lower one)."""
    x = np.asarray(totals, dtype=np.float64) * (12 / max_points if max_points else 1)
    n = len(x)
    if not n:
        return [0.0] * len(BANDS)
    edges = [(lo, hi + 1) for lo, hi in BANDS]
    return [100 * float(np.sum((x >= lo - 1e-9) & (x < hi - 1e-9))) / n for lo, hi in edges]


def as_dict(obj: object) -> dict[str, object]:
    out = asdict(obj)  # type: ignore[call-overload]
    return {
        k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()
    }
