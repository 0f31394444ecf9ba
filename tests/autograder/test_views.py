"""Autograder pages: staff flow, and a student never sees another's answers or the key early."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.autograder import uploads
from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import Answer, GradingRun
from apps.autograder.passes import release
from apps.autograder.services import answers_bulk_upsert
from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    quiz = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    a1 = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    return (
        course,
        quiz,
        a1,
        member(course, Role.TA),
        member(course, email="ada@uni.edu"),
        member(course, email="bo@uni.edu"),
    )


def test_staff_upload_preview_then_confirm(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course, quiz, _a1, ta, _ada, _bo = world
    client = as_user(ta)
    url = f"/c/{course.code}/questions/{quiz.key}/"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"{url}uploads/",
            {
                "file": SimpleUploadedFile(
                    "a.csv",
                    b"Email,q1,q6.1,q6.2,junk\nada@uni.edu,b,40,100,x\nghost@uni.edu,a,1,1,y\n",
                ),
            },
        )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Preview of a.csv: 1 students, 3 answers" in page
    assert "no student of this course with email ghost@uni.edu" in page
    assert Answer.objects.count() == 0
    upload = quiz.uploads.get()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{url}uploads/{upload.pk}/commit/")
    assert Answer.objects.count() == 3
    assert (
        "Stored 3 answers from 1 students"
        in client.get(f"{url}?upload={upload.pk}").content.decode()
    )


def test_a_file_that_is_not_a_csv_is_refused_on_the_page_saying_why(world) -> None:  # type: ignore[no-untyped-def]
    """The form comes back with the reason beside the file field (the field points at it), and
    nothing is stored or queued."""
    course, quiz, _a1, ta, _ada, _bo = world
    response = as_user(ta).post(
        f"/c/{course.code}/questions/{quiz.key}/uploads/",
        {"file": SimpleUploadedFile("answers.csv", bytes(range(256)) * 40)},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="id_file_error">This is not a text file; export the sheet as CSV.</div>' in page
    assert 'aria-describedby="id_file_helptext id_file_error"' in page
    assert not quiz.uploads.exists()
    assert Answer.objects.count() == 0


def test_a_large_upload_shows_a_progress_bar_until_a_worker_reads_it(world) -> None:  # type: ignore[no-untyped-def]
    """Without a worker (tests queue tasks, never run them) the page shows the bar and the
    progress JSON says how far it is."""
    course, quiz, _a1, ta, _ada, _bo = world
    client = as_user(ta)
    url = f"/c/{course.code}/questions/{quiz.key}/"
    rows = b"".join(b"ada@uni.edu,b\n" for _ in range(5000))
    response = client.post(
        f"{url}uploads/", {"file": SimpleUploadedFile("big.csv", b"email,q1\n" + rows)}
    )
    page = client.get(response["Location"]).content.decode()
    assert "Reading the file" in page
    assert "data-progress=" in page
    # the status a worker changes is a live region, read out as it changes (WCAG 4.1.3)
    assert '<p role="status" aria-live="polite"><strong>' in page
    upload = quiz.uploads.get()
    progress = client.get(f"{url}uploads/{upload.pk}/progress/").json()
    assert (progress["done"], progress["expected"], progress["final"]) == (0, 5000, False)
    from apps.autograder.uploads import upload_run

    assert upload_run(upload.pk) == "previewed"  # what the worker does
    progress = client.get(f"{url}uploads/{upload.pk}/progress/").json()
    assert (progress["done"], progress["final"], progress["answers"]) == (5000, True, 1)


def test_a_student_sees_only_their_own_answers_and_no_key_before_release(
    world, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course, quiz, a1, ta, ada, bo = world
    q1 = quiz.questions.get(key="q1")
    answers_bulk_upsert([(q1, ada.pk, 0, "a"), (q1, bo.pk, 0, "b")], "form")
    page = as_user(ada).get(f"/c/{course.code}/questions/{quiz.key}/").content.decode()
    assert 'value="a" checked' in page and 'value="b" checked' not in page  # noqa: PT018
    assert "key:" not in page and "✓ key" not in page  # noqa: PT018
    a1_page = as_user(ada).get(f"/c/{course.code}/questions/{a1.key}/").content.decode()
    assert "Worked solution" not in a1_page
    from apps.autograder.passes import run_create

    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=quiz)
    release(actor=ta, question_set=quiz)
    page = as_user(ada).get(f"/c/{course.code}/questions/{quiz.key}/").content.decode()
    assert "0 / 1" in page and "key: (b)" in page and "More FLOPS = faster" in page  # noqa: PT018


def test_students_see_their_own_numbers_and_worked_solutions_after_release(
    world, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course, _quiz, a1, ta, ada, _bo = world
    from apps.autograder.passes import run_create
    from apps.autograder.services import instance_for

    q = a1.questions.get(key="allreduce")
    mine = instance_for(q, ada)
    page = as_user(ada).get(f"/c/{course.code}/questions/{a1.key}/").content.decode()
    assert f"over {mine.params['n']} GPUs" in page
    as_user(ada).post(
        f"/c/{course.code}/questions/{a1.key}/answers/",
        {"allreduce-0": f"{mine.keys[0] * 1000} ms"},
    )
    assert Answer.objects.get(student=ada, question=q).value == pytest.approx(mine.keys[0])
    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=a1)
    release(actor=ta, question_set=a1)
    page = as_user(ada).get(f"/c/{course.code}/questions/{a1.key}/").content.decode()
    assert "Worked solution" in page and "T = 2(N−1)/N · M/BW + 2(N−1)·α" in page  # noqa: PT018
    assert True


def test_staff_pages_are_staff_only(world) -> None:  # type: ignore[no-untyped-def]
    course, quiz, _a1, ta, ada, _bo = world
    run = GradingRun.objects.create(question_set=quiz, key_version="x", expected=0)
    for url in (
        f"/c/{course.code}/grading/runs/{run.pk}/",
        f"/c/{course.code}/grading/runs/{run.pk}/progress/",
        f"/c/{course.code}/grading/runs/{run.pk}/?format=canvas",
    ):
        assert as_user(ada).get(url).status_code == 403
    set_url = f"/c/{course.code}/questions/{quiz.key}/"
    upload = uploads.upload_create(
        actor=ta, question_set=quiz, filename="a.csv", data=b"Email,q1\nada@uni.edu,b\n"
    )
    for action in ("grade/", "release/", "hide/", "uploads/", f"uploads/{upload.pk}/commit/"):
        assert as_user(ada).post(set_url + action).status_code == 403
    assert Answer.objects.count() == 0  # a student's post never reaches a staff action


def test_the_staff_preview_shows_keys_and_stores_nothing(world) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.models import Instance

    course, _quiz, a1, ta, _ada, _bo = world
    page = as_user(ta).get(f"/c/{course.code}/questions/{a1.key}/").content.decode()
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    # Each part by its label, with its key in its unit; a measurement by the range credited,
    # never a NaN key; the sample parameters as names and values, not a Python dict.
    assert re.search(r"time per token: key \d+(\.\d+)? ms", text)
    assert "measured: a measurement, credited from 1 to 989.5 TFLOP/s" in text
    assert "nan" not in text.split()
    assert re.search(r"Sample parameters: gb = \d+", text)
    assert "{&#x27;" not in page
    assert Instance.objects.count() == 0
    q = a1.questions.get(key="bubble")
    q.parts = [{"label": "bubble", "answer": "pipeline_bubble(stages=pp, microbatches=0)"}]
    q.save()
    page = as_user(ta).get(f"/c/{course.code}/questions/{a1.key}/").content.decode()
    assert "The key cannot be computed" in page


def test_the_question_sets_page_costs_the_same_queries_with_one_set_or_six(world) -> None:  # type: ignore[no-untyped-def]
    """Each set shows its assignment's code: read with the sets, not one query per set."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.autograder.models import QuestionSet

    course, _quiz, a1, _ta, ada, _bo = world
    assignment = a1.assignment or AssignmentFactory(course=course, code="A9")
    QuestionSet.objects.filter(course=course).update(assignment=assignment)
    client = as_user(ada)
    url = f"/c/{course.code}/questions/"
    client.get(url)

    def count() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as ctx:
            page = client.get(url).content.decode()
        return len(ctx.captured_queries), page

    few, page = count()
    assert page.count(f"({assignment.code})") == 2
    for i in range(4):
        QuestionSet.objects.create(
            course=course, key=f"extra-{i}", title=f"Extra {i}", assignment=assignment
        )
    many, page = count()
    assert page.count(f"({assignment.code})") == 6
    assert many == few


def test_a_runs_score_list_pages_50_and_finds_a_student_while_the_histogram_counts_all(
    celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """A 2,000-student course made a 2,000-row page: the list pages, the search finds one."""
    from apps.autograder.passes import run_create
    from tests.autograder.test_workers import setup

    qs, staff = setup(55)
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=staff, question_set=qs)
    run.refresh_from_db()
    assert run.status == "done"
    url = f"/c/{qs.course.code}/grading/runs/{run.pk}/"
    client = as_user(staff)
    first = client.get(url).content.decode()
    scores = first.split('aria-label="Scores"')[1]
    assert scores.count("<tr>") == 1 + 50  # the header and 50 students
    assert "55 students, out of" in first
    assert "page 1 of 2" in first
    assert (
        client.get(url + "?page=2").content.decode().split('aria-label="Scores"')[1].count("<tr>")
        == 1 + 5
    )
    someone = qs.course.memberships.filter(role="student").order_by("pk").last().user
    found = client.get(url, {"q": someone.email}).content.decode()
    assert found.split('aria-label="Scores"')[1].count("<tr>") == 1 + 1
    assert someone.email in found.split('aria-label="Scores"')[1]
    assert "55 students, out of" in found  # the histogram still counts everyone
    none = client.get(url, {"q": "nobody-by-this-name"}).content.decode()
    assert "No graded student matches “nobody-by-this-name”." in none
