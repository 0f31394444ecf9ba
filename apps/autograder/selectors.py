"""Reads for results: per-student totals, item analysis, misconceptions, exports, histogram."""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from html import escape
from typing import Any

from django.db.models import Q, QuerySet, Sum

from apps.autograder.models import Grade, GradingRun, Question, QuestionSet
from apps.core.csvexport import SafeWriter
from apps.core.models import User


@dataclass
class ItemStats:
    question: Question
    n: int = 0
    mean: float = 0.0  # of points
    share_correct: float = 0.0
    wrong: list[tuple[str, int]] = field(default_factory=list)
    implausible: int = 0  # answers above the physical bound
    distractors: list[dict[str, Any]] = field(default_factory=list)


def visible_grades(run: GradingRun | None) -> QuerySet[Grade]:
    """The grades readers see: the run's last complete pass (none before its first)."""
    if run is None or run.current_pass_id is None:
        return Grade.objects.none()
    return Grade.objects.filter(grading_pass_id=run.current_pass_id)


def released_run(question_set: QuestionSet) -> GradingRun | None:
    """The newest run with a complete pass: what students see once results are released."""
    return question_set.runs.filter(current_pass__isnull=False).first()


def visible_grades_of(pairs: list[tuple[Question, int]]) -> dict[tuple[int, int], Grade]:
    """{(question id, student id): grade} of what readers see for each (question, student):
    two queries for a page of pairs across any number of sets, where `released_run` and
    `visible_grades` per pair cost two each."""
    sets = {q.question_set_id for q, _ in pairs}
    passes: dict[int, int] = {}
    for set_id, pass_id in (
        GradingRun.objects.filter(question_set_id__in=sets, current_pass__isnull=False)
        .order_by("-created_at")
        .values_list("question_set_id", "current_pass_id")
    ):
        passes.setdefault(set_id, pass_id)  # the newest run of each set, as released_run
    if not passes:
        return {}
    set_of = {q.pk: q.question_set_id for q, _ in pairs}
    grades = Grade.objects.filter(
        grading_pass_id__in=passes.values(),
        question_id__in=set_of,
        student_id__in={s for _, s in pairs},
    )
    return {
        (g.question_id, g.student_id): g
        for g in grades
        if passes.get(set_of[g.question_id]) == g.grading_pass_id
    }


def totals_rows(run: GradingRun, *, q: str = "") -> QuerySet[Any]:
    """Each graded student's total in SQL (one row per student, by name): lazy, so a page of
    it costs one query however large the course."""
    rows = (
        visible_grades(run)
        .values("student_id", "student__email", "student__full_name")
        .annotate(score=Sum("score"), max=Sum("max_points"))
        .order_by("student__full_name", "student__email")
    )
    if q:
        rows = rows.filter(Q(student__email__icontains=q) | Q(student__full_name__icontains=q))
    return rows


def totals(run: GradingRun) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for student_id, score, maxp in visible_grades(run).values_list(
        "student_id", "score", "max_points"
    ):
        r = rows.setdefault(student_id, {"student_id": student_id, "score": 0.0, "max": 0.0})
        r["score"] += score
        r["max"] += maxp
    users = {u.pk: u for u in User.objects.filter(pk__in=rows)}
    for sid, r in rows.items():
        r["student"] = users[sid]
    return sorted(rows.values(), key=lambda r: (r["student"].full_name, r["student"].email))


def item_analysis(run: GradingRun) -> tuple[list[ItemStats], list[tuple[str, int]]]:
    """Per question: mean, share fully correct, most common wrong answers, each distractor's
    count and misconception; and misconceptions ranked across the whole set (2 queries)."""
    questions = {q.pk: q for q in run.question_set.questions.all()}
    stats = {qid: ItemStats(q) for qid, q in questions.items()}
    wrong: dict[int, Counter[str]] = defaultdict(Counter)
    chosen: dict[int, Counter[str]] = defaultdict(Counter)
    misconceptions: Counter[str] = Counter()
    for qid, score, maxp, detail in visible_grades(run).values_list(
        "question_id", "score", "max_points", "detail"
    ):
        s = stats[qid]
        s.n += 1
        s.mean += score
        s.share_correct += 1 if score >= maxp else 0
        if "chosen" in detail:
            chosen[qid][detail["chosen"] or "(blank)"] += 1
            if detail.get("misconception"):
                misconceptions[detail["misconception"]] += 1
        else:
            if detail.get("misconception"):
                misconceptions[detail["misconception"]] += 1
            for p in detail.get("parts", []):
                s.implausible += 1 if p.get("implausible") else 0
                if p["credit"] == 0 and p["raw"]:
                    wrong[qid][p["raw"]] += 1
    for qid, s in stats.items():
        if s.n:
            s.mean /= s.n
            s.share_correct /= s.n
        s.wrong = wrong[qid].most_common(3)
        q = s.question
        if q.kind == Question.Kind.CHOICE:
            s.distractors = [
                {
                    "label": o["label"],
                    "text": o["text"],
                    "correct": bool(o.get("correct")),
                    "count": chosen[qid].get(o["label"], 0),
                    "misconception": o.get("misconception", ""),
                }
                for o in q.options
            ]
    ordered = [stats[q.pk] for q in sorted(questions.values(), key=lambda q: q.position)]
    return ordered, misconceptions.most_common()


def secondary_credit(run: GradingRun, limit: int = 500) -> list[dict[str, Any]]:
    """Every grade of the run's visible pass that earned credit by a rubric's secondary rule (no
    part right), for staff to review: who, which question, the answers, the rule (one query)."""
    rows = (
        visible_grades(run)
        .filter(detail__secondary=True)
        .select_related("student", "question")
        .order_by("question__position", "student__full_name")[:limit]
    )
    return [
        {
            "student": g.student,
            "question": g.question.key,
            "score": g.score,
            "rule": g.detail.get("rule", ""),
            "answers": " · ".join(p.get("raw", "") or "—" for p in g.detail.get("parts", [])),
        }
        for g in rows
    ]


def gradescope_csv(run: GradingRun) -> str:
    out = io.StringIO()
    w = SafeWriter(out)
    w.writerow(["Name", "SID", "Email", "Total Score", "Max Points"])
    for r in totals(run):
        u = r["student"]
        w.writerow([u.full_name, u.sid, u.email, f"{r['score']:g}", f"{r['max']:g}"])
    return out.getvalue()


def canvas_csv(run: GradingRun) -> str:
    """Canvas gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, <assignment>,
    with the 'Points Possible' row Canvas expects second."""
    title = f"{run.question_set.title} (run {run.pk})"
    rows = totals(run)
    out = io.StringIO()
    w = SafeWriter(out)
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title])
    w.writerow(["    Points Possible", "", "", "", "", f"{rows[0]['max']:g}" if rows else ""])
    for r in rows:
        u = r["student"]
        sortable = (
            ", ".join(reversed(u.full_name.rsplit(" ", 1))) if " " in u.full_name else u.full_name
        )
        w.writerow([sortable, "", u.sid, u.email, "", f"{r['score']:g}"])
    return out.getvalue()


def histogram_svg(scores: list[float], max_points: float, *, title: str) -> str:
    """Bars of how many students got each total (whole points), accessible SVG: it is labelled
    by its title and a <desc> that lists every bar's count, the numbers as text."""
    bins = Counter(round(s) for s in scores)
    top = int(max_points) if max_points else max(bins, default=0)
    described = "; ".join(f"{k} points: {bins.get(k, 0)} students" for k in range(top + 1))
    w, h, left, bottom = 560, 240, 40, 34
    bw = (w - left - 10) / (top + 1)
    peak = max(bins.values(), default=1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
        'aria-labelledby="hist-t hist-d" class="histogram" font-family="system-ui, sans-serif" '
        'font-size="11">',
        f'<title id="hist-t">{escape(title)}</title><desc id="hist-d">{escape(described)}</desc>',
    ]
    for k in range(top + 1):
        c = bins.get(k, 0)
        bh = (h - bottom - 20) * c / peak
        x = left + k * bw
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{h - bottom - bh:.1f}" width="{bw - 4:.1f}" '
            f'height="{bh:.1f}" fill="#2957c4"><title>{k} points: {c} students</title></rect>'
        )
        parts.append(
            f'<text x="{x + bw / 2:.1f}" y="{h - bottom + 14}" text-anchor="middle">{k}</text>'
        )
        if c:
            parts.append(
                f'<text x="{x + bw / 2:.1f}" y="{h - bottom - bh - 3:.1f}" '
                f'text-anchor="middle">{c}</text>'
            )
    parts.append(
        f'<text x="{left + (w - left) / 2:.1f}" y="{h - 4}" text-anchor="middle">Total score '
        "(points)</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)
