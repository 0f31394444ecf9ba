"""The pre/post report: every figure computed from submitted responses keyed by participant ID.
A participant who ticked NO RESEARCH in either administration is left out of everything here
(their scores still reach them); a figure over fewer than 5 participants is suppressed.

Per phase (every non-opted-out response of that phase): histogram, score bands against the
seed's expected shares, item means, misconception prevalence. Paired (participants with both a
pre and a post response): gain with its 95 % CI, paired t and Wilcoxon, Cohen's d pooled and
paired, Hake's ⟨g⟩, per-goal gains with CIs, item means before and after."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from apps.assessments import stats
from apps.assessments.models import EXPECTED_BANDS, Assessment, Response
from apps.assessments.services import questions_of
from apps.autograder.models import Question
from apps.autograder.rules import rubric_text

BAND_NAMES = ["0–3", "4–6", "7–9", "10–12"]


def goals_of(questions: list[Question]) -> OrderedDict[str, dict[str, Any]]:
    """Each understanding goal's maximum, from the questions actually tagged with it."""
    out: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for q in questions:
        g = out.setdefault(
            q.goal or "untagged", {"goal": q.goal or "untagged", "max_points": 0.0, "questions": []}
        )
        g["max_points"] += q.points
        g["questions"].append(q.key)
    return OrderedDict(sorted(out.items()))


def _f(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def included(a: Assessment) -> tuple[dict[str, dict[int, Response]], int]:
    """{phase: {participant id: response}} without anyone who opted out, and how many did."""
    rows = list(
        Response.objects.filter(administration__assessment=a, status=Response.Status.SUBMITTED)
        .select_related("administration")
        .only("participant_id", "opted_out", "scores", "total", "administration__phase")
    )
    out_ids = {r.participant_id for r in rows if r.opted_out}
    by: dict[str, dict[int, Response]] = {"pre": {}, "post": {}}
    for r in rows:
        if r.participant_id not in out_ids:
            by[r.administration.phase][r.participant_id] = r
    return by, len(out_ids)


def _phase(
    responses: list[Response],
    questions: list[Question],
    max_points: float,
    phase: str,
    expected: dict[str, Any],
) -> dict[str, Any]:
    n = len(responses)
    if n < stats.MIN_GROUP:
        return {"n": n, "suppressed": True, "reason": f"fewer than {stats.MIN_GROUP} participants"}
    totals = np.array([r.total for r in responses], dtype=np.float64)
    hist = [int(np.sum(np.floor(totals + 1e-9) == k)) for k in range(int(max_points) + 1)]
    shares = stats.band_shares(totals, max_points)
    exp = (expected.get("bands") or EXPECTED_BANDS).get(phase, [None] * 4)
    counts: dict[str, int] = {}
    for r in responses:
        for name in {s.get("misconception") for s in r.scores.values() if s.get("misconception")}:
            counts[name] = counts.get(name, 0) + 1
    items = {
        q.key: {
            "mean": float(np.mean([r.scores.get(q.key, {}).get("points", 0.0) for r in responses])),
            "share_full": float(
                np.mean([r.scores.get(q.key, {}).get("fraction", 0.0) >= 1 for r in responses])
            ),
        }
        for q in questions
    }
    return {
        "n": n,
        "suppressed": False,
        "mean": float(np.mean(totals)),
        "sd": float(np.std(totals, ddof=1)),
        "histogram": hist,
        "bands": [
            {"band": b, "observed": s, "expected": e}
            for b, s, e in zip(BAND_NAMES, shares, exp, strict=False)
        ],
        "misconceptions": {k: v / n for k, v in sorted(counts.items())},
        "items": items,
    }


def build(a: Assessment) -> dict[str, Any]:
    questions = questions_of(a)
    goals = goals_of(questions)
    max_points = float(sum(q.points for q in questions))
    by, opted = included(a)
    matched = sorted(set(by["pre"]) & set(by["post"]))
    expected = a.expected or {}
    out: dict[str, Any] = {
        "assessment": {
            "id": a.pk,
            "title": a.title,
            "question_set": a.question_set.key,
            "max_points": max_points,
            "time_limit_minutes": a.time_limit_minutes,
        },
        "conventions": {
            "cohens_d_pooled": "(mean post − mean pre) / √((s²pre + s²post)/2), sample SDs",
            "cohens_d_paired": "mean difference / SD of the differences (d_z)",
            "hake_gain": "(post mean − pre mean) / (maximum − pre mean), of class means",
            "gain_ci": "95 % Student-t interval, n − 1 degrees of freedom",
            "population": "phase figures: every response of the phase; paired figures: "
            "participants with both",
            "excluded": "participants who ticked NO RESEARCH in either administration",
        },
        "goals": [
            {"goal": g["goal"], "max_points": g["max_points"], "questions": g["questions"]}
            for g in goals.values()
        ],
        "rubrics": {
            q.key: {
                "rubric": (q.rubric_spec or {}).get("name") or q.rubric,
                "rule": rubric_text(q.rubric, q.rubric_spec),
                "unit_slip": bool((q.rubric_spec or {}).get("unit_slip")),
            }
            for q in questions
            if q.kind != Question.Kind.CHOICE
        },
        "counts": {
            "pre": len(by["pre"]),
            "post": len(by["post"]),
            "matched": len(matched),
            "unmatched_pre": len(by["pre"]) - len(matched),
            "unmatched_post": len(by["post"]) - len(matched),
            "opted_out": opted,
        },
        "phases": {
            p: _phase(list(by[p].values()), questions, max_points, p, expected)
            for p in ("pre", "post")
        },
    }
    n = len(matched)
    if n < stats.MIN_GROUP:
        out["paired"] = {
            "n": n,
            "suppressed": True,
            "reason": f"fewer than {stats.MIN_GROUP} matched participants",
        }
    else:
        pre = np.array([by["pre"][p].total for p in matched], dtype=np.float64)
        post = np.array([by["post"][p].total for p in matched], dtype=np.float64)
        gain = stats.mean_ci(post - pre)
        tests = stats.paired_tests(pre, post)
        goal_rows = []
        for g in goals.values():

            def pts(phase: str, pid: int, keys: list[str] = g["questions"]) -> float:
                return float(sum(by[phase][pid].scores.get(k, {}).get("points", 0.0) for k in keys))

            gp = np.array([pts("pre", p) for p in matched])
            gq = np.array([pts("post", p) for p in matched])
            share = (
                stats.mean_ci((gq - gp) / g["max_points"])
                if g["max_points"]
                else stats.Interval(np.nan, np.nan, np.nan)
            )
            goal_rows.append(
                {
                    "goal": g["goal"],
                    "max_points": g["max_points"],
                    "pre_points": float(gp.mean()),
                    "post_points": float(gq.mean()),
                    "pre_share": float(gp.mean() / g["max_points"]),
                    "post_share": float(gq.mean() / g["max_points"]),
                    "gain_points": float((gq - gp).mean()),
                    "gain_share": stats.as_dict(share),
                }
            )
        out["paired"] = {
            "n": n,
            "suppressed": False,
            "pre_mean": float(pre.mean()),
            "post_mean": float(post.mean()),
            "gain": stats.as_dict(gain),
            "t": _f(tests.t),
            "t_p": _f(tests.t_p),
            "wilcoxon_w": _f(tests.wilcoxon_w),
            "wilcoxon_p": _f(tests.wilcoxon_p),
            "cohens_d_pooled": _f(stats.cohens_d_pooled(pre, post)),
            "cohens_d_paired": _f(stats.cohens_d_paired(pre, post)),
            "hake_gain": _f(stats.hake_gain(float(pre.mean()), float(post.mean()), max_points)),
            "expected_d": expected.get("d", 1.2),
            "goals": goal_rows,
            "items": [
                {
                    "question": q.key,
                    "goal": q.goal,
                    "points": q.points,
                    "pre_mean": float(
                        np.mean(
                            [by["pre"][p].scores.get(q.key, {}).get("points", 0.0) for p in matched]
                        )
                    ),
                    "post_mean": float(
                        np.mean(
                            [
                                by["post"][p].scores.get(q.key, {}).get("points", 0.0)
                                for p in matched
                            ]
                        )
                    ),
                }
                for q in questions
            ],
        }
    names = sorted(
        set().union(*[set(out["phases"][p].get("misconceptions", {})) for p in ("pre", "post")])
    )
    out["misconceptions"] = [
        {
            "name": m,
            "pre": out["phases"]["pre"]
            .get("misconceptions", {})
            .get(m, 0.0 if not out["phases"]["pre"]["suppressed"] else None),
            "post": out["phases"]["post"]
            .get("misconceptions", {})
            .get(m, 0.0 if not out["phases"]["post"]["suppressed"] else None),
        }
        for m in names
    ]
    return out


def participants_csv_rows(a: Assessment) -> list[list[Any]]:
    """De-identified per-participant scores (no opt-outs): ID, totals and goal points per phase."""
    questions = questions_of(a)
    goals = goals_of(questions)
    by, _ = included(a)
    header = ["participant", "pre_total", "post_total"] + [
        f"{p}_{g}" for p in ("pre", "post") for g in goals
    ]
    rows: list[list[Any]] = [header]
    codes = dict(a.participants.values_list("pk", "code"))
    for pid in sorted(set(by["pre"]) | set(by["post"]), key=lambda x: codes.get(x, "")):
        line: list[Any] = [
            codes.get(pid, ""),
            *[by[p][pid].total if pid in by[p] else "" for p in ("pre", "post")],
        ]
        line += [
            sum(by[p][pid].scores.get(k, {}).get("points", 0.0) for k in g["questions"])
            if pid in by[p]
            else ""
            for p in ("pre", "post")
            for g in goals.values()
        ]
        rows.append(line)
    return rows
