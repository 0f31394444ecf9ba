"""A course for the cluster test, written into the cluster's database from one of its hosts:
`python -m tests.cluster.seed N` → one line of JSON (course code, question set, a TA's API token).
N students in groups (tests.bigcourse), the MLSys·im quiz with every student's answers, and
`python -m tests.cluster.seed --due CODE A2` adds an assignment due in 5 hours: one reminder per
student, which beat queues and the workers send."""

from __future__ import annotations

import datetime as dt
import json
import sys

import django

django.setup()

from django.utils import timezone  # noqa: E402

from apps.autograder.bank import BANKS, bank_load  # noqa: E402
from apps.autograder.intake import answers_import  # noqa: E402
from apps.calendar.models import Assignment  # noqa: E402
from apps.core.models import Course, Membership, Role  # noqa: E402
from apps.core.tokens import token_create  # noqa: E402
from tests.autograder.test_grading import quiz_csv  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402
from tests.factories import CourseFactory  # noqa: E402


def due(code: str, assignment: str) -> None:
    now = timezone.now()
    Assignment.objects.create(
        course=Course.objects.get(code=code),
        code=assignment,
        title=f"Assignment {assignment}",
        release_at=now - dt.timedelta(days=1),
        due_at=now + dt.timedelta(hours=5),
    )


def seed(n: int) -> dict[str, str]:
    course = CourseFactory(code="cluster-sp26")
    people = build_big_course(course, n, password="cluster-Password-2026!")
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    students = [m.user for m in Membership.objects.filter(course=course, role=Role.STUDENT)]
    answers_import(actor=people["ta"], question_set=qs, data=quiz_csv(students), commit=True)
    _, key = token_create(user=people["ta"], name="cluster test")
    return {"course": course.code, "set": qs.key, "token": key, "ta": people["ta"].email}


if __name__ == "__main__":
    if sys.argv[1] == "--due":
        due(sys.argv[2], sys.argv[3])
    else:
        sys.stdout.write(json.dumps(seed(int(sys.argv[1]))) + "\n")
