"""A regrade round trip as people do it: the student asks from the released set page, the TA
re-scores from the queue, the gradebook total changes, the student is e-mailed, an audit row
exists; a later grading pass keeps the new points; one open request per question; closed after
the regrade window."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.models import Grade, RegradeRequest
from apps.autograder.passes import release, run_create
from apps.autograder.selectors import visible_grades
from apps.calendar.models import Assignment
from apps.core.models import AuditEvent, GradingComponent, Role
from apps.gradebook.selectors import gradebook_rows
from tests.autograder.test_grading import quiz_csv
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(celery_eager, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A2")
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    qs.assignment = Assignment.objects.get(course=course, code="A2")
    qs.save()
    GradingComponent.objects.create(
        course=course, key="assignments-core", name="Assignments", weight=100, source="autograder"
    )
    ta = member(course, Role.TA)
    students = [member(course) for _ in range(3)]
    answers_import(actor=ta, question_set=qs, data=quiz_csv(students), commit=True)
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=ta, question_set=qs)
    run.refresh_from_db()
    assert run.current_pass_id is not None
    release(actor=ta, question_set=qs)
    return course, qs, ta, students, run


def test_the_round_trip(graded, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    course, qs, ta, students, run = graded
    student = students[0]
    q = qs.questions.get(key="q7")
    before = visible_grades(run).get(student=student, question=q).score
    total_before = (
        gradebook_rows(course, student_ids=[student.pk])[0].cells["assignments-core"].percent
    )
    page = Client()
    page.force_login(student)
    html = page.get(f"/c/{course.code}/questions/{qs.key}/").content.decode()
    assert "Ask for a regrade" in html
    asked = page.post(
        f"/c/{course.code}/questions/{qs.key}/regrade/",
        {"question": "q7", "part": "1", "reason": "I wrote kilotonnes and said so in the box."},
        follow=True,
    ).content.decode()
    assert "Regrade request on q7 sent" in asked
    again = page.post(
        f"/c/{course.code}/questions/{qs.key}/regrade/",
        {"question": "q7", "reason": "Asking twice about the same thing."},
        follow=True,
    ).content.decode()
    assert "already have an open request" in again
    r = RegradeRequest.objects.get(student=student)
    staff = Client()
    staff.force_login(ta)
    queue = staff.get(f"/c/{course.code}/regrades/").content.decode()
    assert "I wrote kilotonnes" in queue
    assert "Rubric:" in queue
    assert "key 195" in queue
    new = q.points if before < q.points else 0
    with django_capture_on_commit_callbacks(execute=True):
        staff.post(
            f"/c/{course.code}/regrades/{r.pk}/rescore/",
            {"points": str(new), "comment": "Fair: the unit was stated."},
        )
    r.refresh_from_db()
    assert (r.status, r.new_points) == ("rescored", new)
    assert visible_grades(run).get(student=student, question=q).score == new
    total_after = (
        gradebook_rows(course, student_ids=[student.pk])[0].cells["assignments-core"].percent
    )
    assert total_after != total_before
    assert mail.outbox[-1].to == [student.email]
    assert "re-scored" in mail.outbox[-1].body
    assert "Fair: the unit was stated." in mail.outbox[-1].body
    assert AuditEvent.objects.filter(
        action="grading.regrade_rescored", object_id=str(r.pk)
    ).exists()
    # a later pass (grade again) keeps the TA's points
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=ta, question_set=qs)
    run.refresh_from_db()
    assert visible_grades(run).get(student=student, question=q).score == new
    assert Grade.objects.filter(grading_pass__run=run, student=student, question=q).count() >= 1


def test_declining_keeps_the_points_and_the_window_closes(
    graded, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder import regrades
    from apps.core.errors import Conflict, DomainError

    course, qs, ta, students, run = graded
    q = qs.questions.get(key="q1")
    r = regrades.request_create(actor=students[1], question=q, reason="Option b is also right.")
    with pytest.raises(DomainError, match="why"):
        regrades.decide(actor=ta, course=course, request_id=r.pk, points=None, comment=" ")
    with django_capture_on_commit_callbacks(execute=True):
        regrades.decide(
            actor=ta, course=course, request_id=r.pk, points=None, comment="No: see the key."
        )
    assert visible_grades(run).get(student=students[1], question=q).score == r.old_points
    assert "declined" in mail.outbox[-1].body
    with pytest.raises(DomainError, match="at least a sentence"):
        regrades.request_create(actor=students[2], question=q, reason="no")
    qs.released_at = timezone.now() - dt.timedelta(days=8)
    qs.save()
    with pytest.raises(Conflict, match="closed"):
        regrades.request_create(actor=students[2], question=q, reason="Late but please look.")


def test_the_api_has_the_same_round_trip(graded, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    course, qs, ta, students, _run = graded
    api = f"/api/v1/courses/{course.code}/"
    student, staff = APIClient(), APIClient()
    student.force_authenticate(students[2])
    staff.force_authenticate(ta)
    asked = student.post(
        api + f"question-sets/{qs.key}/regrades/",
        {"question": "q6", "part": 2, "reason": "My FP16 fleet answer matches the key."},
        format="json",
    )
    assert asked.status_code == 201, asked.json()
    assert asked.json()["part"] == 2
    queue = staff.get(api + "regrades/?status=open").json()
    assert [r["id"] for r in queue["results"]] == [asked.json()["id"]]
    assert student.get(api + "regrades/").json()["count"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        done = staff.post(
            api + f"regrades/{asked.json()['id']}/decide/",
            {"points": 2, "comment": "Right; the band was too tight."},
            format="json",
        )
    assert done.json()["status"] == "rescored"
    assert (
        student.post(api + f"regrades/{asked.json()['id']}/decide/", {}, format="json").status_code
        == 403
    )


def test_dropping_a_student_closes_their_open_request(graded) -> None:  # type: ignore[no-untyped-def]
    """Lifecycle: the roster drops a student; their open request leaves the staff queue, closed
    as declined with the reason, and check_course stays at 0."""
    from apps.autograder import regrades
    from apps.core.invariants import run_checks
    from apps.core.models import Membership
    from apps.roster.services import roster_commit, roster_upload

    course, qs, _ta, students, _run = graded
    gone = students[0]
    r = regrades.request_create(
        actor=gone, question=qs.questions.get(key="q1"), reason="Option b is also right."
    )
    instructor = member(course, Role.INSTRUCTOR)
    keep = Membership.objects.filter(course=course, role=Role.STUDENT).exclude(user=gone)
    rows = "".join(
        f"{m.user.full_name},{m.user.email},,student\n" for m in keep.select_related("user")
    )
    record, _ = roster_upload(
        actor=instructor,
        course=course,
        filename="r.csv",
        data=f"name,email,sid,role\n{rows}".encode(),
    )
    roster_commit(actor=instructor, record=record)
    r.refresh_from_db()
    assert (r.status, r.comment) == ("declined", "Closed: the student was dropped from the course.")
    assert not regrades.queue(course).exists()
    assert run_checks(course.pk) == []


def test_the_queue_pages_in_the_same_queries_filters_by_set_and_exports_what_it_shows(
    graded,
) -> None:  # type: ignore[no-untyped-def]
    import csv
    import io

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    course, qs, ta, students, _run = graded
    staff = Client()
    staff.force_login(ta)
    url = f"/c/{course.code}/regrades/"

    def queries() -> tuple[int, str]:
        staff.get(url)
        with CaptureQueriesContext(connection) as ctx:
            html = staff.get(url).content.decode()
        return len(ctx.captured_queries), html

    questions = list(qs.questions.order_by("position"))
    ask = RegradeRequest.objects.create
    ask(question=questions[0], student=students[0], reason="First request.", old_points=0)
    one, html = queries()
    assert html.count('id="regrade-') == 1
    for s in students:
        for q in questions[1:5]:
            ask(question=q, student=s, reason=f"About {q.key}.", old_points=0)
    many, html = queries()
    assert html.count('id="regrade-') == 13
    assert html.count("· key ") >= 13  # each shows the answer and key beside it
    assert many == one, f"{one} queries for 1 request, {many} for 13"

    other = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    ask(
        question=other.questions.order_by("position").first(),
        student=students[2],
        reason="A question of the other set.",
        old_points=0,
    )
    both = staff.get(url).content.decode()
    assert f'<option value="{other.key}">' in both
    one_set = staff.get(url, {"set": other.key}).content.decode()
    assert one_set.count('id="regrade-') == 1
    assert "A question of the other set." in one_set
    unknown = staff.get(url, {"set": "no-such-set"}).content.decode()
    assert unknown.count('id="regrade-') == 14  # an unknown set shows every set, as "every set"

    answer = staff.get(url, {"status": "open", "set": qs.key, "format": "csv"})
    assert answer["Content-Type"].startswith("text/csv")
    assert f"{course.code}-regrades-{qs.key}-open.csv" in answer["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert rows[0][:4] == ["asked", "question set", "question", "part"]
    assert len(rows) == 1 + 13
    assert rows[1][6] == "First request."
    assert rows[1][8:11] == ["0", "", f"{questions[0].points:g}"]  # points as people write them
    assert rows[1][0].endswith(("PST", "PDT"))  # course time, the zone named
    student_page = Client()
    student_page.force_login(students[0])
    assert student_page.get(url, {"format": "csv"}).status_code == 403
