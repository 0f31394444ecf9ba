"""A course for the cluster test, written into the cluster's database from one of its hosts:
`python -m tests.cluster.seed N` → one line of JSON (course code, question set, a TA's API token).
N students in groups (tests.bigcourse), the MLSys·im quiz with every student's answers, and
`python -m tests.cluster.seed --due CODE A2` adds an assignment due in 5 hours: one reminder per
student, which beat queues and the workers send. `python -m tests.cluster.seed --failover N` is
the database failover's course (tests/cluster/test_db_failover.py): N students, the quiz, an
assignment F1 due in five days, and API tokens for the TA and for one student of each group."""

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
from apps.groups.models import Group  # noqa: E402
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


def failover(n: int) -> dict[str, object]:
    """seed(n), plus F1 and a token for the first student of each group."""
    out: dict[str, object] = dict(seed(n))
    course = Course.objects.get(code=out["course"])
    now = timezone.now()
    f1 = Assignment.objects.create(
        course=course,
        code="F1",
        title="Assignment F1",
        release_at=now - dt.timedelta(days=1),
        due_at=now + dt.timedelta(days=5),
    )
    groups = []
    for group in Group.objects.filter(course=course).order_by("name"):
        members = [m.user for m in group.memberships.order_by("user_id")]
        _, key = token_create(user=members[0], name="failover test")
        groups.append({"student": members[0].email, "token": key, "ids": [u.pk for u in members]})
    return {**out, "assignment": f1.pk, "groups": groups}


if __name__ == "__main__":
    if sys.argv[1] == "--failover":
        sys.stdout.write(json.dumps(failover(int(sys.argv[2]))) + "\n")
    elif sys.argv[1] == "--due":
        due(sys.argv[2], sys.argv[3])
    else:
        sys.stdout.write(json.dumps(seed(int(sys.argv[1]))) + "\n")
