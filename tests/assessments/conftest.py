import random
from dataclasses import dataclass

import pytest

from apps.assessments import services
from apps.assessments.models import Assessment
from apps.autograder.bank import BANKS, bank_load
from apps.core.models import Course, Role, User
from tests.factories import CourseFactory, member

KEYS = {"q1": "b", "q2": "a", "q3": "b", "q4": "b", "q5": "a", "q8": "b", "q9": "a", "q10": "a"}
WRONG = {"q1": "a", "q2": "b", "q3": "a", "q4": "c", "q5": "b", "q8": "a", "q9": "d", "q10": "c"}
HEADER = [
    "Timestamp",
    "Participant ID",
    "q1",
    "q2",
    "q3",
    "q4",
    "q5",
    "q6.1",
    "q6.2",
    "q7.1",
    "q7.2",
    "q8",
    "q9",
    "q10",
]


@dataclass
class Setup:
    course: Course
    staff: User
    assessment: Assessment


@pytest.fixture
def quiz(db) -> Setup:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    staff = member(course, Role.INSTRUCTOR)
    return Setup(course, staff, services.create(actor=staff, course=course, question_set_id=qs.pk))


def answers_for(rng: random.Random, p_right: float) -> dict[str, str]:
    row = {
        k: (KEYS[k] if rng.random() < p_right else rng.choice([WRONG[k], "c", "d"])) for k in KEYS
    }
    row["q6.1"], row["q6.2"] = rng.choice(
        [("40", "100"), ("40", "50"), ("80", "100"), ("48", "120")]
        if rng.random() > p_right
        else [("40", "100")]
    )
    row["q7.1"], row["q7.2"] = rng.choice(
        [("195000", "600"), ("195", "6"), ("300", "0.5"), ("214", "0.66")]
        if rng.random() > p_right
        else [("195", "0.6")]
    )
    return row


def make_csv(
    rows: list[tuple[str, dict[str, str]]], opt_col: dict[str, str] | None = None
) -> bytes:
    header = HEADER + (["Research (opt-out)"] if opt_col is not None else [])
    lines = [",".join(header)]
    for code, ans in rows:
        cells = ["2026-04-28 09:01:00", code, *[ans[h] for h in HEADER[2:]]]
        if opt_col is not None:
            cells.append(opt_col.get(code, ""))
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode()
