"""The course grade as a table: each row a student's scores and what the rules must say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.gradebook import rules
from apps.gradebook.rules import Component

# The syllabus's components (thresholds 60 %, the course file's default).
EE290 = [
    Component("project", "Research project", 50, 60),
    Component("project-technical", "Technical quality", 40, 60, "project"),
    Component("project-impact", "Impact", 10, 60, "project"),
    Component("assignments", "Assignments", 35, 60),
    Component("assignments-core", "Core / working", 25, 60, "assignments"),
    Component("assignments-enhancements", "Enhancements", 10, 60, "assignments"),
    Component("scribing", "Scribing", 5, 60),
    Component("participation", "Attendance & participation", 10, 60),
]
KEYS = (
    "project-technical",
    "project-impact",
    "assignments-core",
    "assignments-enhancements",
    "scribing",
    "participation",
)


def scores(*values: float | None) -> dict[str, float | None]:
    return dict(zip(KEYS, values, strict=True))


# technical, impact, core, enhancements, scribing, participation → status, letter, total
TABLE = [
    ((100, 100, 100, 100, 100, 100), "final", "A+", 100.0),
    ((100, 100, 100, 100, 0, 100), "fail", "F", 95.0),  # 95 % with scribing unsatisfactory
    ((100, 100, 100, 100, 59.99, 100), "fail", "F", 97.9995),  # a hair under the threshold
    ((93, 93, 93, 93, 93, 93), "final", "A", 93.0),  # exactly on a cut-off
    ((92.99, 93, 93, 93, 93, 93), "final", "A-", 92.996),
    ((60, 60, 60, 60, 60, 60), "final", "D-", 60.0),  # every component just satisfactory
    ((90, 50, 90, 90, 90, 90), "fail", "F", 86.0),  # a part (impact) under its threshold
    ((90, 90, 90, None, 90, 90), "incomplete", None, None),  # never a silent zero
    ((None, None, None, None, None, None), "incomplete", None, None),
]


@pytest.mark.parametrize(("values", "status", "letter", "total"), TABLE)
def test_the_rule_table(
    values: tuple[float | None, ...], status: str, letter: str | None, total: float | None
) -> None:
    g = rules.course_grade(EE290, scores(*values))
    assert (g.status, g.letter) == (status, letter)
    assert g.total == pytest.approx(total) if total is not None else g.total is None


def test_an_f_names_the_component_and_the_threshold() -> None:
    g = rules.course_grade(EE290, scores(100, 100, 100, 100, 40, 100))
    assert g.status == "fail"
    assert g.total == pytest.approx(97.0)
    assert g.reason == "F: Scribing is 40 %, below the satisfactory 60 %."


def test_incomplete_lists_what_is_missing_and_the_grade_so_far() -> None:
    g = rules.course_grade(EE290, scores(80, None, 90, None, 100, None))
    assert g.missing == ["Impact", "Enhancements", "Attendance & participation"]
    assert g.to_date == pytest.approx((40 * 80 + 25 * 90 + 5 * 100) / 70)
    assert g.percents["project"] is None  # a component is known only when all its parts are
    assert "Impact" in g.reason
    assert g.letter is None


def test_at_risk_while_incomplete() -> None:
    g = rules.course_grade(EE290, scores(90, None, 40, 90, None, None))
    assert g.status == "incomplete"
    assert g.at_risk
    assert g.reason.startswith("At risk: ")
    assert "Core / working is 40 %" in g.reason
    assert "Assignments is 54.3 %" in g.reason


def test_parent_percent_is_the_weighted_mean_of_its_parts() -> None:
    g = rules.course_grade(EE290, scores(70, 100, 80, 50, 100, 100))
    assert g.percents["project"] == pytest.approx((40 * 70 + 10 * 100) / 50)
    assert g.percents["assignments"] == pytest.approx((25 * 80 + 10 * 50) / 35)
    # Enhancements 50 % fails its own threshold even though Assignments (71.4 %) passes.
    assert [s.key for s in g.failing] == ["assignments-enhancements"]


def test_a_threshold_of_zero_is_not_checked() -> None:
    lenient = [c if c.key != "scribing" else Component("scribing", "Scribing", 5, 0) for c in EE290]
    assert rules.course_grade(lenient, scores(100, 100, 100, 100, 0, 100)).letter == "A"


def test_what_if_gives_the_score_needed_and_why() -> None:
    known = scores(90, None, 90, None, 100, None)  # 70 % of the weight scored
    w = rules.needed_for(EE290, known, "A-")
    # (90 - (40*90 + 25*90 + 5*100)/100) * 100 / 30 = 88.33… → rounded up to 88.4
    assert w.needed == pytest.approx(88.4)
    assert "A-" in w.message
    assert rules.course_grade(
        EE290,
        {**known, "project-impact": 88.4, "assignments-enhancements": 88.4, "participation": 88.4},
    ).letter in ("A-", "A")


def test_what_if_needs_at_least_the_thresholds() -> None:
    known = scores(100, 100, 100, None, 100, 100)  # D- is assured by the total alone…
    w = rules.needed_for(EE290, known, "D-")
    assert w.needed == 60  # …but enhancements must still be satisfactory
    assert "satisfactory" in w.message


def test_what_if_out_of_reach() -> None:
    assert rules.needed_for(EE290, scores(50, None, 60, 60, 60, 60), "A").needed is None
    failed = rules.needed_for(EE290, scores(90, None, 90, 90, 10, 90), "B")
    assert failed.needed is None
    assert "Scribing" in failed.message
    assert rules.needed_for(EE290, scores(90, 90, 90, 90, 90, 90), "Z").needed is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(0, 100)), min_size=6, max_size=6),
    st.sampled_from([x for x, _ in rules.STANDARD_CUTOFFS]),
)
def test_what_if_is_enough_and_not_more(values: list[float | None], target: str) -> None:
    known = scores(*values)
    w = rules.needed_for(EE290, known, target)
    if w.needed is None:
        return
    minimum = dict(rules.STANDARD_CUTOFFS)[target]
    filled = {k: (w.needed if v is None else v) for k, v in known.items()}
    g = rules.course_grade(EE290, filled)
    assert g.status == "final"
    assert g.total is not None
    assert g.total + 1e-6 >= minimum
    if w.needed > 0.1:  # a tenth less fails the letter or a threshold
        lower = {k: (w.needed - 0.11 if v is None else v) for k, v in known.items()}
        g2 = rules.course_grade(EE290, lower)
        assert g2.status == "fail" or (g2.total or 0) < minimum


def test_weights_that_do_not_add_up_are_named_with_their_sum() -> None:
    bad = [c if c.key != "scribing" else Component("scribing", "Scribing", 7, 60) for c in EE290]
    assert rules.weight_problems(bad) == ["The components' weights add up to 102, not 100."]
    parts = [
        c if c.key != "project-impact" else Component("project-impact", "Impact", 5, 60, "project")
        for c in EE290
    ]
    assert "The parts of Research project add up to 45, not its 50." in rules.weight_problems(parts)
    assert rules.weight_problems(EE290) == []


def test_cutoffs_and_scores_typed_by_people() -> None:
    cutoffs, problems = rules.parse_cutoffs("A 93, A- 90\nB+ 87")
    assert cutoffs == [("A", 93.0), ("A-", 90.0), ("B+", 87.0)]
    assert problems == []
    assert rules.parse_cutoffs("A 90, B 92")[1] == [
        "B (92) must be below A (90): list letters highest first."
    ]
    assert "'A': write a letter and its minimum" in rules.parse_cutoffs("A")[1][0]
    assert rules.parse_score("85") == 85
    assert rules.parse_score("85 %") == 85
    assert rules.parse_score("17/20") == 85
    assert rules.parse_score("72,5") == 72.5
    for bad in ("abc", "101", "-1", "nan", "1/0", "inf"):
        with pytest.raises(ValueError, match=r"not a score|outside|above 0"):
            rules.parse_score(bad)
    assert rules.letter_for(59.999999, rules.STANDARD_CUTOFFS) == "F"
