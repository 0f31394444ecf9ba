"""Units that agree everywhere: each part is answered in its own unit, a bare number is read in
it, a compatible unit is converted, an incompatible one is refused naming the expected unit; a
measured value outside the hardware's bounds is flagged, never credited; and a bank whose prompt
asks in one unit while its part is in another does not load."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.autograder.bank import BANKS, BankError, bank_load
from apps.autograder.models import Question
from apps.autograder.services import answer_submit, grade_students, instance_for
from apps.core.errors import DomainError
from apps.core.models import Role
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def a1():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    return course, qs


def _grade(qs, student, key: str) -> dict:  # type: ignore[no-untyped-def]
    q = qs.questions.get(key=key)
    return next(r for r in grade_students(qs, [student.pk]) if r["question_id"] == q.pk)


@pytest.mark.parametrize("spelling", ["{ms}", "{ms} ms", "{s} s", "{us} us"])
def test_decode_is_answered_in_milliseconds_however_it_is_written(a1, spelling: str) -> None:  # type: ignore[no-untyped-def]
    course, qs = a1
    student = member(course, Role.STUDENT)
    q = qs.questions.get(key="decode")
    ms = instance_for(q, student).keys[0]
    assert 1 < ms < 100  # milliseconds per token, as the prompt asks (8–140 GB at 3.35 TB/s)
    raw = spelling.format(ms=f"{ms:.4g}", s=f"{ms / 1e3:.4g}", us=f"{ms * 1e3:.4g}")
    answer_submit(actor=student, question=q, answers={0: raw})
    assert _grade(qs, student, "decode")["fraction"] == 1.0


def test_an_answer_in_an_incompatible_unit_is_refused_naming_the_expected_one(a1) -> None:  # type: ignore[no-untyped-def]
    course, qs = a1
    student = member(course, Role.STUDENT)
    with pytest.raises(DomainError, match="'GB' is bytes; this answer is in ms"):
        answer_submit(
            actor=student, question=qs.questions.get(key="decode"), answers={0: "38.2 GB"}
        )


def test_the_answer_page_shows_each_parts_unit(a1, client) -> None:  # type: ignore[no-untyped-def]
    course, qs = a1
    student = member(course, Role.STUDENT)
    client.force_login(student)
    page = client.get(f"/c/{course.code}/questions/{qs.key}/").content.decode()
    assert '<span class="unit" aria-hidden="true">ms</span>' in page
    assert '<span class="unit" aria-hidden="true">TFLOP/s</span>' in page
    bad = client.post(
        f"/c/{course.code}/questions/{qs.key}/answers/",
        {"decode-0": "38.2 GB", "bubble-0": "0.2"},
        follow=True,
    ).content.decode()
    assert (
        "Not saved: decode: &#x27;38.2 GB&#x27;: &#x27;GB&#x27; is bytes; this answer is in ms."
        in bad
    )
    assert "1 answer(s) saved" in bad


@pytest.mark.parametrize(
    ("raw", "credited", "flagged"),
    [("2500", 0.0, True), ("0.6", 0.0, True), ("650", 1.0, False), ("0.65 PFLOPS", 1.0, False)],
)
def test_a_measurement_outside_the_hardware_is_flagged_not_credited(
    a1, raw: str, credited: float, flagged: bool
) -> None:  # type: ignore[no-untyped-def]
    course, qs = a1
    student = member(course, Role.STUDENT)
    answer_submit(actor=student, question=qs.questions.get(key="measured-tflops"), answers={0: raw})
    grade = _grade(qs, student, "measured-tflops")
    assert grade["fraction"] == credited
    part = grade["detail"]["parts"][0]
    assert part["implausible"] is flagged
    assert part["bound"] == pytest.approx(989.5)  # named to the student, in TFLOP/s
    assert part["unit"] == "TFLOP/s"


def test_a_bank_whose_prompt_and_part_disagree_does_not_load(tmp_path: Path) -> None:
    course = CourseFactory()
    text = (BANKS / "a1-numbers.yaml").read_text()
    broken = text.replace(
        'unit: "ms", answer: "roofline_time(', 'unit: "s", answer: "roofline_time('
    )
    assert broken != text
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    with pytest.raises(BankError) as exc:
        bank_load(course=course, path=path)
    assert exc.value.problems == [
        "decode: the prompt asks in 'Milliseconds' but the answer is in s; make them agree"
    ]
    assert not Question.objects.filter(question_set__course=course).exists()  # nothing loaded


def test_every_shipped_bank_loads() -> None:
    course = CourseFactory()
    for path in sorted(BANKS.glob("*.yaml")):
        assert bank_load(course=course, path=path).questions.exists(), path.name


def test_the_worked_solution_shows_si_and_the_parts_unit(a1) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.services import worked_solution

    course, qs = a1
    student = member(course, Role.STUDENT)
    q = qs.questions.get(key="decode")
    inst = instance_for(q, student)
    steps = worked_solution(q, inst.params)[0]
    assert steps[-1] == f"In ms, the unit this part is answered in: {inst.keys[0]:.6g}"
    assert any(" s" in s for s in steps[:-1])  # the calculator's own steps, in seconds


@pytest.mark.parametrize(("unit_slip", "points"), [(True, 1.0), (False, 0.0)])
def test_q7s_unit_slip_rule_is_read_from_the_bank(
    tmp_path: Path, unit_slip: bool, points: float
) -> None:
    """(195000, 600): both tonnages off by 10³ — the course's call, declared in the bank."""
    from apps.autograder.rules import rubric_text
    from apps.autograder.services import score_raw

    course = CourseFactory()
    text = (BANKS / "mlsysim-quiz.yaml").read_text()
    assert "    unit_slip: false\n" in text  # shipped: the seed's rubric, literally
    if unit_slip:  # the generous reading, a course's option
        text = text.replace("    unit_slip: false\n", "    unit_slip: true\n")
    path = tmp_path / "quiz.yaml"
    path.write_text(text)
    qs = bank_load(course=course, path=path)
    q7 = qs.questions.get(key="q7")
    got = score_raw([q7], [{"q7": ["195000", "600"]}, {"q7": ["195", "0.6"]}])
    assert got[0]["q7"]["points"] == points
    assert got[1]["q7"]["points"] == 2.0
    assert q7.rubric_spec["name"] == "q7-carbon"
    shown = rubric_text(q7.rubric, q7.rubric_spec)
    assert ("a shared unit slip earns the partial credit" in shown) == unit_slip
    # A tonnage is read in tonnes however it is written.
    for raw in (["195 t", "0.6 t"], ["195000 kg", "600 kg"], ["195 tonnes", "6e2 kg"]):
        assert score_raw([q7], [{"q7": raw}])[0]["q7"]["points"] == 2.0, raw


def test_a_key_that_can_be_zero_needs_an_absolute_tolerance(tmp_path: Path) -> None:
    """a4-serving/queue: with 16 replicas the p99 request never waits, the key is exactly 0 s
    and "0.001 s" is right; a bank that leaves such a part to a relative tolerance is refused."""
    course = CourseFactory()
    text = (BANKS / "a4-serving.yaml").read_text()
    assert "    abs_tol: 0.001\n" in text
    path = tmp_path / "a4.yaml"
    path.write_text(text.replace("    abs_tol: 0.001\n", ""))
    with pytest.raises(BankError) as exc:
        bank_load(course=course, path=path)
    assert exc.value.problems == [
        "queue: part 1: its key is exactly 0 when c=16, lam=20, mu=4, where a relative tolerance "
        "gives no credit to any other answer; give the question an abs_tol"
    ]

    qs = bank_load(course=course, path=BANKS / "a4-serving.yaml")
    q = qs.questions.get(key="queue")
    zero = next(
        s
        for s in (member(course, Role.STUDENT) for _ in range(40))
        if instance_for(q, s).keys[0] == 0
    )
    answer_submit(actor=zero, question=q, answers={0: "0.001 s"})
    assert _grade(qs, zero, "queue")["fraction"] == 1.0
    answer_submit(actor=zero, question=q, answers={0: "0.05 s"})
    assert _grade(qs, zero, "queue")["fraction"] == 0.0
