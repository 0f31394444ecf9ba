"""The quiz's two short-answer rubrics, end to end (CSV → answers → grading run → grades), with
answers on each side of every boundary: the full tolerance (Q6 exact, Q7 10 %), Q6's 20 % band,
one part right, units off by 10³, and Q7's same-ratio rule. Each grade names the rule that gave
its credit, and the secondary-rule ones are listed for review."""

from __future__ import annotations

import pytest

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.models import Grade
from apps.autograder.rules import RUBRICS
from apps.autograder.selectors import item_analysis, secondary_credit
from apps.core.models import Role
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db

# (q6 INT4, q6 FP16, points, rule) — keys 40 and 100, exact; partial band 20 %.
Q6 = [
    ("40", "100", 2, "both parts"),
    ("40", "120", 1, "one part"),  # FP16 exactly 20 % off: one part right is what counts
    ("48", "120", 1, "both within the partial band"),  # both exactly 20 % off: the secondary rule
    ("48.1", "120", 0, "none"),  # INT4 just past 20 %
    ("47", "121", 0, "none"),  # FP16 just past 20 %
    ("48.1", "100", 1, "one part"),
    ("40000", "100000", 0, "none"),  # units off by 10³: no ratio rule on Q6
    ("50", "50", 0, "none"),
    ("", "", 0, "none"),
]
# (q7 Virginia, q7 Quebec, points, rule) — keys 195 and 0.6 t, within 10 %; the shipped rubric
# q7-carbon is the seed's, literally: both parts off by 10³ (the /1000 left out) is not the method.
Q7 = [
    ("195", "0.6", 2, "both parts"),
    ("214", "0.66", 2, "both parts"),  # 9.7 % and exactly 10 %
    ("215", "0.6", 1, "one part"),  # Virginia just past 10 %
    ("195000", "600", 0, "none"),  # both in kg instead of tonnes: the /1000 left out
    ("195000", "0.6", 1, "one part"),  # one part off by 10³
    ("300", "0.923", 0, "none"),  # the key's ratio, but no unit slip: not the method
    ("0.195", "0.0006", 0, "none"),  # both in kilotonnes
    ("216", "0.5", 0, "none"),  # both wrong, ratio 432 ≠ 325
    ("300", "0.5", 0, "none"),
    ("", "0.6", 1, "one part"),
]


def test_every_band_boundary_of_q6_and_q7_end_to_end(
    celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.passes import run_create

    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    n = max(len(Q6), len(Q7))
    students = [member(course) for _ in range(n)]
    lines = ["email,q1,q2,q3,q4,q5,q6.1,q6.2,q7.1,q7.2,q8,q9,q10"]
    for i, s in enumerate(students):
        q6, q7 = Q6[i % len(Q6)], Q7[i % len(Q7)]
        lines.append(
            ",".join([s.email, "b", "a", "b", "b", "a", q6[0], q6[1], q7[0], q7[1], "b", "a", "a"])
        )
    report = answers_import(
        actor=staff, question_set=qs, data=("\n".join(lines) + "\n").encode(), commit=True
    )
    assert report.problems == []
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=staff, question_set=qs)
    grades = {
        (g.student_id, g.question.key): g
        for g in Grade.objects.filter(grading_pass__run=run).select_related("question")
    }
    for i, s in enumerate(students):
        for key, table in (("q6", Q6), ("q7", Q7)):
            _, _, points, rule = table[i % len(table)]
            g = grades[(s.pk, key)]
            assert (g.score, g.detail["rule"]) == (points, rule), (key, table[i % len(table)])
            assert g.detail["secondary"] is (
                rule in {"both within the partial band", "one unit slip both parts share"}
            )
        total = sum(
            grades[(s.pk, q)].score for q in ("q1", "q2", "q3", "q4", "q5", "q8", "q9", "q10")
        )
        assert total == 8  # every multiple-choice answer right
    run.refresh_from_db()
    review = secondary_credit(run)
    assert sorted((r["question"], r["answers"]) for r in review) == sorted([("q6", "48 · 120")])
    _, misconceptions = item_analysis(run)
    assert dict(misconceptions)["Units: grams, kilograms and tonnes confused"] == 2  # 195000 twice
    assert dict(misconceptions)["Quantization is just a latency trick"] == 1  # FP16 written as 50


def test_each_rubric_is_named_on_the_set_page(client) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    client.force_login(staff)
    page = client.get(f"/c/{course.code}/questions/mlsysim-quiz/").content.decode()
    assert "the /1000 left out" in page  # Q7's rubric, as the bank declares it
    assert "within the partial band" in page
    assert set(RUBRICS) == {"mean", "two_part", "two_part_ratio"}
