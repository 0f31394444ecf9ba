"""Question sets, answers, grading runs, item analysis, exports — on the real demo bank."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.models import Answer, Grade, GradingRun, Instance, Question
from apps.autograder.passes import grade_pass_chunk, run_create
from apps.autograder.selectors import (
    canvas_csv,
    gradescope_csv,
    histogram_svg,
    item_analysis,
    totals,
    visible_grades,
)
from apps.autograder.services import fixed_keys, instance_for, traps_hit_columns
from apps.core.errors import NotAllowed
from apps.core.models import Role
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db

# Seeded answer pools: correct options mostly, with the quiz's expected pre-test errors.
POOLS = {
    "q1": ["b"] * 5 + ["a"] * 4 + ["c", "d"],  # "More FLOPS = faster" is the common pre-test error
    "q2": ["a"] * 5 + ["b"] * 4 + ["c", "d"],
    "q3": ["b"] * 6 + ["a"] * 3 + ["c"],
    "q4": ["b"] * 6 + ["a", "c", "c", "d"],
    "q5": ["a"] * 6 + ["b"] * 3 + ["c"],
    "q8": ["b"] * 4 + ["a"] * 5 + ["c"],
    "q9": ["a"] * 7 + ["d", "d", "b"],
    "q10": ["a"] * 6 + ["b", "c", "c", "d"],
}


@pytest.fixture
def run_now(django_capture_on_commit_callbacks, celery_eager):  # type: ignore[no-untyped-def]
    """run_create with its on-commit grading task executed in-process."""

    def go(actor, qs, **kw):  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks(execute=True):
            run = run_create(actor=actor, question_set=qs, **kw)
        run.refresh_from_db()
        return run

    return go


def quiz_csv(students, seed: int = 7) -> bytes:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    lines = ["email,q1,q2,q3,q4,q5,q6.1,q6.2,q7.1,q7.2,q8,q9,q10"]
    for s in students:
        q6 = rng.choice([("40", "100"), ("40", "50"), ("80", "100"), ("45", "110"), ("", "")])
        q7 = rng.choice([("195", "0.6"), ("195,000", "600"), ("190", "0.58"), ("200", "abc")])
        pick = {k: rng.choice(v) for k, v in POOLS.items()}
        lines.append(
            ",".join(
                [
                    s.email,
                    pick["q1"],
                    pick["q2"],
                    pick["q3"],
                    pick["q4"],
                    pick["q5"],
                    *q6,
                    *(f'"{x}"' for x in q7),
                    pick["q8"],
                    pick["q9"],
                    pick["q10"],
                ]
            )
        )
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def quiz():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.TA)
    students = [member(course) for _ in range(80)]
    return course, qs, staff, students


def test_the_demo_quiz_has_ten_items_and_the_right_keys(quiz) -> None:  # type: ignore[no-untyped-def]
    _course, qs, _staff, _students = quiz
    questions = {q.key: q for q in qs.questions.all()}
    assert len(questions) == 10
    assert sum(q.points for q in questions.values()) == 12
    assert fixed_keys(questions["q6"]) == [40, 100]
    assert fixed_keys(questions["q7"]) == pytest.approx([195, 0.6])
    assert [o["label"] for o in questions["q1"].options if o.get("correct")] == ["b"]
    assert {q.goal for q in questions.values()} == {"U1", "U2", "U3", "U4", "U5", "U6"}


def test_quiz_graded_from_a_csv_of_80_responses_names_the_top_misconception(quiz, run_now) -> None:  # type: ignore[no-untyped-def]
    _course, qs, staff, students = quiz
    data = quiz_csv(students)
    preview = answers_import(actor=staff, question_set=qs, data=data, commit=False)
    assert preview.students == 80 and Answer.objects.count() == 0  # noqa: PT018
    assert preview.mapping["q6.2"] == "q6 part 2"
    report = answers_import(actor=staff, question_set=qs, data=data, commit=True)
    assert report.problems == []
    assert Answer.objects.filter(status="unparseable", raw="abc").exists()
    run = run_now(staff, qs, chunk_size=25)
    run.refresh_from_db()
    assert run.status == "done"
    assert Grade.objects.filter(grading_pass__run=run).count() == 80 * 10
    items, misconceptions = item_analysis(run)
    # the seed's two most common pre-test errors; Q6's wrong fleet sizes (50, 80) count too
    assert {name for name, _ in misconceptions[:2]} == {
        "More FLOPS = faster",
        "Quantization is just a latency trick",
    }
    q1 = items[0]
    assert {d["label"]: d["misconception"] for d in q1.distractors}["a"] == "More FLOPS = faster"
    assert sum(d["count"] for d in q1.distractors) == 80
    q6 = next(i for i in items if i.question.key == "q6")
    assert q6.wrong
    assert q6.wrong[0][0] in {"50", "80"}
    scores = [r["score"] for r in totals(run)]
    assert all(0 <= s <= 12 for s in scores) and len(scores) == 80  # noqa: PT018
    assert "<svg" in histogram_svg(scores, 12, title="Scores")


def test_regrading_an_unchanged_key_is_a_new_pass_with_the_same_scores(quiz, run_now) -> None:  # type: ignore[no-untyped-def]
    _course, qs, staff, students = quiz
    answers_import(actor=staff, question_set=qs, data=quiz_csv(students), commit=True)
    run = run_now(staff, qs, chunk_size=25)
    before = sorted(visible_grades(run).values_list("student_id", "question_id", "score"))
    again = run_now(staff, qs, chunk_size=25)
    assert again.pk == run.pk  # same key → same run, a second pass
    assert again.current_pass.number == 2
    after = sorted(visible_grades(again).values_list("student_id", "question_id", "score"))
    assert after == before  # readers now see pass 2, with the same scores
    ids = sorted(Grade.objects.filter(grading_pass__run=run).values_list("id", flat=True))
    assert grade_pass_chunk(again.current_pass_id, 0) == 0  # a redelivered chunk: nothing
    assert sorted(Grade.objects.filter(grading_pass__run=run).values_list("id", flat=True)) == ids


def test_changing_the_key_makes_a_new_run_and_keeps_the_old(quiz, run_now) -> None:  # type: ignore[no-untyped-def]
    _course, qs, staff, students = quiz
    answers_import(actor=staff, question_set=qs, data=quiz_csv(students), commit=True)
    first = run_now(staff, qs)
    q7 = qs.questions.get(key="q7")
    q7.rel_tol = 0.3
    q7.save()
    second = run_now(staff, qs)
    assert second.pk != first.pk
    assert GradingRun.objects.count() == 2
    assert (
        Grade.objects.filter(grading_pass__run=first).count()
        == Grade.objects.filter(grading_pass__run=second).count()
        == 800
    )


def test_exports_in_gradescope_and_canvas_shapes(quiz, run_now) -> None:  # type: ignore[no-untyped-def]
    _course, qs, staff, students = quiz
    answers_import(actor=staff, question_set=qs, data=quiz_csv(students[:3]), commit=True)
    run = run_now(staff, qs)
    gs = gradescope_csv(run).splitlines()
    assert gs[0] == "Name,SID,Email,Total Score,Max Points"
    assert len(gs) == 81
    cv = canvas_csv(run).splitlines()
    assert cv[0].startswith("Student,ID,SIS User ID,SIS Login ID,Section,MLSys·im quiz (run")
    assert cv[1].startswith("    Points Possible") and cv[1].endswith(",12")  # noqa: PT018


def test_unknown_students_and_unmapped_columns_are_reported_not_fatal(quiz) -> None:  # type: ignore[no-untyped-def]
    _course, qs, staff, students = quiz
    data = f"Email,q1,notes\nghost@uni.edu,a,hi\n{students[0].email},b,x\n".encode()
    report = answers_import(actor=staff, question_set=qs, data=data, commit=True)
    assert report.problems == [
        "row 2: no student of this course with email ghost@uni.edu or SID — (row skipped)"
    ]
    assert report.unmapped == ["notes"]
    assert Answer.objects.filter(student=students[0]).count() == 1


def test_students_cannot_upload_or_run(quiz) -> None:  # type: ignore[no-untyped-def]
    _course, qs, _staff, students = quiz
    with pytest.raises(NotAllowed):
        answers_import(actor=students[0], question_set=qs, data=b"email,q1\n", commit=True)
    with pytest.raises(NotAllowed):
        run_create(actor=students[0], question_set=qs)


def test_per_student_parameters_are_stored_and_reproduced() -> None:
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    qs = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    q = qs.questions.get(key="allreduce")
    a, b = member(course), member(course)
    ia = instance_for(q, a)
    assert Instance.objects.get(question=q, student=a).params == ia.params
    Instance.objects.all().delete()
    assert instance_for(q, a).params == ia.params  # same seed → same values, even after a reset
    n, gb, bw = ia.params["n"], ia.params["message_gb"], ia.params["link_gbs"]
    assert ia.keys[0] == pytest.approx(2 * (n - 1) / n * gb * 1e9 / (bw * 1e9))
    assert instance_for(q, b).seed != ia.seed


def test_a_measurement_above_the_gpus_peak_is_flagged(run_now) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.services import answers_bulk_upsert

    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    qs = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    staff = member(course, Role.TA)
    honest, bragging, silent = member(course), member(course), member(course)
    q = qs.questions.get(key="measured-tflops")
    answers_bulk_upsert(
        [(q, honest.pk, 0, "710 TFLOPS"), (q, bragging.pk, 0, "1,979 TFLOPS")], "form"
    )
    run = run_now(staff, qs)
    grades = {g.student_id: g for g in Grade.objects.filter(grading_pass__run=run, question=q)}
    assert grades[honest.pk].score == 1
    assert grades[bragging.pk].score == 0
    part = grades[bragging.pk].detail["parts"][0]
    assert part["implausible"] is True
    assert part["bound"] == pytest.approx(989.5)  # TFLOP/s, the part's unit
    assert grades[silent.pk].score == 0
    items, _ = item_analysis(run)
    assert next(i for i in items if i.question.key == "measured-tflops").implausible == 1


def test_a_run_no_worker_takes_says_so_after_a_minute(quiz) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from django.utils import timezone

    from apps.autograder.models import GradingPass
    from apps.autograder.passes import progress

    _course, qs, staff, _students = quiz
    run = run_create(actor=staff, question_set=qs)  # queued; nothing runs it in this test
    assert progress(run)["note"] == ""
    GradingPass.objects.filter(run=run).update(created_at=timezone.now() - dt.timedelta(minutes=2))
    note = progress(GradingRun.objects.get(pk=run.pk))["note"]
    assert "No worker has taken this pass" in note
    assert "make worker" in note


def _trap_of_one_answer(q: Question, values: list[float], credits: list[float]) -> str:
    """The rule for one student, answer by answer, as the course states it: the misconception
    of the first wrong part whose answer is one of its known wrong answers, within tolerance."""
    for part, value, credit in zip(q.parts, values, credits, strict=False):
        if credit >= 1.0 or not math.isfinite(value):
            continue
        for trap in part.get("traps", []):
            target = float(trap["answer"])
            if abs(value - target) <= max(abs(target) * q.rel_tol, q.abs_tol, 1e-12):
                return str(trap.get("misconception", ""))
    return ""


def test_a_chunk_names_the_same_misconception_as_one_answer_at_a_time() -> None:
    """A grading chunk finds trapped answers a column at a time; each student must get what the
    rule says answer by answer: the first wrong part's first matching trap, nothing for a right
    part, a blank or a non-number, and a trap's empty misconception still ending the search."""
    q = Question(
        key="t",
        kind=Question.Kind.MULTIPART,
        rel_tol=0.1,
        abs_tol=0.5,
        parts=[
            {"label": "a", "traps": [{"answer": 80, "misconception": "first"}, {"answer": 81}]},
            {"label": "b", "traps": [{"answer": 0, "misconception": "zero"}]},
            {"label": "c"},
        ],
    )
    r = random.Random(3)
    pool = [80, 72.0, 88.0, 88.1, 81, 0, 0.5, 0.51, -0.5, 7, math.nan, math.inf, -math.inf]
    rows = [[r.choice(pool) for _ in range(3)] for _ in range(2000)]
    credit_rows = [[r.choice([0.0, 0.5, 1.0]) for _ in range(3)] for _ in range(2000)]
    values = [np.array([row[p] for row in rows], dtype=np.float64) for p in range(3)]
    credits = [np.array([c[p] for c in credit_rows], dtype=np.float64) for p in range(3)]

    got = traps_hit_columns(q, values, credits)

    expected = [_trap_of_one_answer(q, row, c) for row, c in zip(rows, credit_rows, strict=True)]
    assert got == expected
    assert {"first", "zero", ""} <= set(got)  # every way out was taken at least once
    q.parts = [{"label": "a"}]
    assert traps_hit_columns(q, values[:1], credits[:1]) is None  # no traps: nothing to look up
