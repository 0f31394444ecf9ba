from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.passes import release
from apps.autograder.services import answers_bulk_upsert
from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db


def api(u: User | None) -> APIClient:
    c = APIClient()
    if u:
        c.force_authenticate(u)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    quiz = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    return (
        course,
        quiz,
        member(course, Role.TA),
        member(course, email="ada@uni.edu"),
        member(course, email="bo@uni.edu"),
    )


def test_a_student_submits_and_sees_only_their_own_answers_and_no_key(world) -> None:  # type: ignore[no-untyped-def]
    course, quiz, _ta, ada, bo = world
    base = f"/api/v1/courses/{course.code}/question-sets/{quiz.key}"
    stored = (
        api(ada)
        .post(
            f"{base}/answers/",
            {"question": "q6", "answers": {"0": "40", "1": "1e2"}},
            format="json",
        )
        .json()
    )
    assert [a["value"] for a in stored] == [40, 100]
    answers_bulk_upsert([(quiz.questions.get(key="q6"), bo.pk, 0, "80")], "form")
    mine = api(ada).get(f"{base}/mine/").json()
    body = json.dumps(mine)
    assert '"80"' not in body  # not Bo's answer
    assert "correct" not in body and "misconception" not in body and "score" not in body  # noqa: PT018
    q6 = next(q for q in mine["questions"] if q["key"] == "q6")
    assert q6["answers"] == {"0": "40", "1": "1e2"}


def test_after_release_the_student_sees_grades_and_keys(
    world, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course, quiz, ta, ada, _bo = world
    base = f"/api/v1/courses/{course.code}/question-sets/{quiz.key}"
    api(ada).post(f"{base}/answers/", {"question": "q1", "answers": {"0": "a"}}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        run = api(ta).post(f"{base}/runs/").json()
    release(actor=ta, question_set=quiz)
    q1 = next(q for q in api(ada).get(f"{base}/mine/").json()["questions"] if q["key"] == "q1")
    assert q1["score"] == 0
    assert q1["detail"]["misconception"] == "More FLOPS = faster"
    results = (
        api(ta).get(f"/api/v1/courses/{course.code}/grading-runs/{run['id']}/?results=1").json()
    )
    assert results["status"] == "done"
    assert results["misconceptions"][0][0] == "More FLOPS = faster"


def test_staff_upload_preview_and_commit(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.models import Answer

    course, quiz, ta, _ada, _bo = world
    base = f"/api/v1/courses/{course.code}/question-sets/{quiz.key}/uploads/"
    data = b"email,q1,q2\nada@uni.edu,b,a\nbo@uni.edu,,zz\nghost@uni.edu,a,a\n"
    with django_capture_on_commit_callbacks(execute=True):
        queued = api(ta).post(base, {"file": SimpleUploadedFile("a.csv", data)}, format="multipart")
    assert queued.status_code == 202
    preview = api(ta).get(f"{base}{queued.json()['upload']}/").json()
    assert preview["status"] == "previewed"
    assert preview["final"] is True
    assert (preview["done"], preview["expected"]) == (3, 3)
    assert preview["answers"] == 4
    assert "row 4: no student of this course with email ghost@uni.edu" in preview["problems"][0]
    assert Answer.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        stored = api(ta).post(f"{base}{preview['upload']}/commit/")
    assert stored.status_code == 202
    assert api(ta).get(f"{base}{preview['upload']}/").json()["status"] == "committed"
    assert Answer.objects.count() == 4
    again = api(ta).post(f"{base}{preview['upload']}/commit/")  # changes nothing
    assert again.json()["status"] == "committed"
    assert Answer.objects.count() == 4
    with django_capture_on_commit_callbacks(execute=True):
        direct = api(ta).post(
            base + "?commit=1", {"file": SimpleUploadedFile("b.csv", data)}, format="multipart"
        )
    assert api(ta).get(f"{base}{direct.json()['upload']}/").json()["status"] == "committed"
    empty = api(ta).post(base, {"file": SimpleUploadedFile("e.csv", b"")}, format="multipart")
    assert empty.status_code == 400
    assert empty.json()["field"] == "file"


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "question-sets/mlsysim-quiz/uploads/"), ("post", "question-sets/mlsysim-quiz/runs/")],
)
def test_students_get_403_on_staff_endpoints(world, method: str, path: str) -> None:  # type: ignore[no-untyped-def]
    course, _quiz, _ta, ada, _bo = world
    assert getattr(api(ada), method)(f"/api/v1/courses/{course.code}/{path}").status_code == 403


def test_anonymous_401_outsiders_404(world) -> None:  # type: ignore[no-untyped-def]
    course, quiz, _ta, _ada, _bo = world
    assert api(None).get(f"/api/v1/courses/{course.code}/question-sets/").status_code == 401
    assert (
        api(member(CourseFactory()))
        .get(f"/api/v1/courses/{course.code}/question-sets/{quiz.key}/mine/")
        .status_code
        == 404
    )


def test_no_answers_after_results_are_released(world) -> None:  # type: ignore[no-untyped-def]
    """Once keys are visible, a student could copy them: answering closes at release."""
    course, quiz, ta, ada, _bo = world
    base = f"/api/v1/courses/{course.code}/question-sets/{quiz.key}"
    assert (
        api(ada)
        .post(f"{base}/answers/", {"question": "q1", "answers": {"0": "a"}}, format="json")
        .status_code
        == 200
    )
    release(actor=ta, question_set=quiz)
    late = api(ada).post(
        f"{base}/answers/", {"question": "q1", "answers": {"0": "b"}}, format="json"
    )
    assert late.status_code == 409
    assert "released" in late.json()["detail"]
    from apps.autograder.models import Answer

    assert Answer.objects.get(student=ada).raw == "a"


def test_a_part_the_question_does_not_have_is_refused(world) -> None:  # type: ignore[no-untyped-def]
    course, quiz, _ta, ada, _bo = world
    base = f"/api/v1/courses/{course.code}/question-sets/{quiz.key}"
    response = api(ada).post(
        f"{base}/answers/", {"question": "q6", "answers": {"7": "3"}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "q6 has parts 0–1."
    response = api(ada).post(
        f"{base}/answers/", {"question": "q1", "answers": {"1": "a"}}, format="json"
    )
    assert response.json()["detail"] == "q1 has part 0 only."
    from apps.autograder.models import Answer

    assert Answer.objects.count() == 0


def test_run_totals_are_paged_with_the_same_queries_for_any_class_size(
    django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def graded_run(n: int):  # type: ignore[no-untyped-def]
        course = CourseFactory()
        quiz = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
        ta = member(course, Role.TA)
        q1 = quiz.questions.get(key="q1")
        answers_bulk_upsert([(q1, member(course).pk, 0, "b") for _ in range(n)], "form")
        with django_capture_on_commit_callbacks(execute=True):
            run = (
                api(ta).post(f"/api/v1/courses/{course.code}/question-sets/{quiz.key}/runs/").json()
            )
        return course, ta, run["id"]

    counts = []
    for n in (12, 60):
        course, ta, run_id = graded_run(n)
        url = f"/api/v1/courses/{course.code}/grading-runs/{run_id}/"
        summary = api(ta).get(url + "?results=1").json()
        assert summary["students"] == n
        assert summary["totals_url"].endswith(f"/grading-runs/{run_id}/totals/")
        with CaptureQueriesContext(connection) as ctx:
            page = api(ta).get(url + "totals/?page_size=10").json()
        counts.append(len(ctx.captured_queries))
        assert page["count"] == n
        assert len(page["results"]) == 10
        names = [r["name"] for r in page["results"]]
        assert names == sorted(names)
        assert {"email", "name", "score", "max"} <= set(page["results"][0])
    assert counts[0] == counts[1]
