"""The report from two CSVs (80 pre responses, 75 post, 3 opting out), through the API, against
an independent computation from the same files: matched count, per-goal gains, Cohen's d and the
normalised gain agree within 1e-9; no opted-out participant reaches any figure or export."""

from __future__ import annotations

import csv
import io
import math
import random

import numpy as np
import pytest
from rest_framework.test import APIClient

from tests.assessments.conftest import KEYS, Setup, answers_for, make_csv

pytestmark = pytest.mark.django_db
GOALS = {
    "U1": ["q1", "q2"],
    "U2": ["q3"],
    "U3": ["q4"],
    "U4": ["q5", "q6"],
    "U5": ["q7", "q8"],
    "U6": ["q9", "q10"],
}
POINTS = {"q6": 2, "q7": 2}
EPS = 1e-12  # the app's boundary convention: a relative error exactly on a band edge is inside


def _rel(v: float, key: float) -> float:
    return abs(v - key) / abs(key)


def independent_score(ans: dict[str, str]) -> dict[str, float]:
    """The quiz's rubric, written again from the seed: 1 point per right choice; Q6 2 / 1 (one
    right, or both within 20 %) / 0; Q7 2 / 1 (one within 10 %) / 0 — the seed's rubric read
    literally: both tonnages off by 10³ is the /1000 left out, a wrong method (domain rules)."""
    out = {k: 1.0 if ans[k] == v else 0.0 for k, v in KEYS.items()}
    a, b = float(ans["q6.1"]), float(ans["q6.2"])
    fa, fb = _rel(a, 40) <= 1e-4 + EPS, _rel(b, 100) <= 1e-4 + EPS
    pa, pb = _rel(a, 40) <= 0.2 + EPS, _rel(b, 100) <= 0.2 + EPS
    out["q6"] = 2.0 if fa and fb else 1.0 if (fa or fb or (pa and pb)) else 0.0
    v, q = float(ans["q7.1"]), float(ans["q7.2"])
    fv, fq = _rel(v, 195) <= 0.1 + EPS, _rel(q, 0.6) <= 0.1 + EPS
    out["q7"] = 2.0 if fv and fq else 1.0 if (fv or fq) else 0.0
    return out


def test_report_from_80_pre_and_75_post_responses_matches_an_independent_computation(
    quiz: Setup,
) -> None:
    rng = random.Random(2026)
    pre_rows = [(f"P{i:03d}", answers_for(rng, 0.45)) for i in range(1, 81)]
    post_rows = [(f"P{i:03d}", answers_for(rng, 0.8)) for i in [*range(1, 71), *range(101, 106)]]
    opted = {"P005", "P010", "P020"}
    pre_csv = make_csv(
        [(f"{c} NO RESEARCH" if c in {"P005", "P010"} else c, a) for c, a in pre_rows]
    )
    post_csv = make_csv(post_rows, opt_col={"P020": "NO RESEARCH"})

    api = APIClient()
    api.force_authenticate(quiz.staff)
    base = f"/api/v1/courses/{quiz.course.code}/assessments/{quiz.assessment.pk}/"
    for phase, data in (("pre", pre_csv), ("post", post_csv)):
        r = api.post(
            base + "imports/", {"phase": phase, "file": io.BytesIO(data)}, format="multipart"
        )
        assert r.status_code == 201, r.json()
        assert r.json()["report"]["problem_count"] == 0
        assert api.post(base + f"imports/{r.json()['id']}/commit/").status_code == 200
    rep = api.get(base + "report/").json()

    # ---- the independent computation, from the same rows
    pre = {c: independent_score(a) for c, a in pre_rows if c not in opted}
    post = {c: independent_score(a) for c, a in post_rows if c not in opted}
    matched = sorted(set(pre) & set(post))
    assert rep["counts"] == {
        "pre": 77,
        "post": 72,
        "matched": 67,
        "unmatched_pre": 10,
        "unmatched_post": 5,
        "opted_out": 3,
    }
    assert len(matched) == 67
    x = np.array([sum(pre[c].values()) for c in matched])
    y = np.array([sum(post[c].values()) for c in matched])
    d = (y.mean() - x.mean()) / math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2)
    hake = (y.mean() - x.mean()) / (12 - x.mean())
    paired = rep["paired"]
    assert abs(paired["cohens_d_pooled"] - d) < 1e-9
    assert abs(paired["hake_gain"] - hake) < 1e-9
    assert abs(paired["cohens_d_paired"] - (y - x).mean() / (y - x).std(ddof=1)) < 1e-9
    assert abs(paired["gain"]["mean"] - (y - x).mean()) < 1e-9
    maxima = {g: sum(POINTS.get(k, 1) for k in ks) for g, ks in GOALS.items()}
    assert (
        {g["goal"]: g["max_points"] for g in rep["goals"]}
        == maxima
        == {"U1": 2, "U2": 1, "U3": 1, "U4": 3, "U5": 3, "U6": 2}
    )
    for g in paired["goals"]:
        ks = GOALS[g["goal"]]
        gain = np.mean(
            [
                (sum(post[c][k] for k in ks) - sum(pre[c][k] for k in ks)) / maxima[g["goal"]]
                for c in matched
            ]
        )
        assert abs(g["gain_share"]["mean"] - gain) < 1e-9, g["goal"]
        assert g["gain_share"]["low"] < g["gain_share"]["mean"] < g["gain_share"]["high"]
    assert d > 0.5  # the post answers were drawn to be better

    # ---- nobody who opted out reaches an export or a figure
    csv_rows = list(
        csv.reader(
            io.StringIO(b"".join(api.get(base + "export/?as=csv").streaming_content).decode())
        )
    )
    codes = {row[0] for row in csv_rows[1:]}
    assert not codes & opted
    assert codes == set(pre) | set(post)
    assert rep["phases"]["pre"]["n"] == 77
    assert sum(rep["phases"]["pre"]["histogram"]) == 77
    summary = api.get(base + "export/?as=json").json()
    assert summary["counts"]["opted_out"] == 3
    assert "P005" not in str(summary)
    assert "P020" not in str(summary)


def test_the_report_page_draws_the_three_pictures(quiz: Setup, client) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    rows = [(f"A{i:02d}", answers_for(rng, 0.4)) for i in range(12)]
    later = [(c, answers_for(rng, 0.85)) for c, _ in rows]
    from apps.assessments import services

    for phase, data in (("pre", make_csv(rows)), ("post", make_csv(later))):
        imp = services.import_preview(
            actor=quiz.staff,
            course=quiz.course,
            assessment_id=quiz.assessment.pk,
            phase=phase,
            filename=f"{phase}.csv",
            data=data,
        )
        services.import_commit(
            actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, import_id=imp.pk
        )
    client.force_login(quiz.staff)
    page = client.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/").content.decode()
    assert 'class="plot hist"' in page
    assert 'class="plot goals"' in page
    assert 'class="plot misc"' in page
    from tests.test_aria_references import charts_without_numbers

    assert charts_without_numbers(page) == []  # each chart's numbers as text (WCAG 1.1.1)
    misc = page[page.index("<h2>Misconceptions before and after") :]
    assert "Share of participants showing each misconception" in misc
    assert page.count('class="ci"') == 6  # a confidence interval per goal
    assert "12 matched participants" in page
