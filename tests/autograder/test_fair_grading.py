"""Fair written grading as Gradescope offers it: names hidden while grading (no name or e-mail on
the grader's pages, a search that reads only the answers), each written question given to a TA
who then sees theirs first, and per-question progress (graded of answered) on the set page."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import Question
from apps.autograder.services import answer_submit
from apps.autograder.written import marks_apply
from apps.core.models import Role, User
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def lab():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ta1 = member(course, Role.TA, email="ta1@uni.edu", full_name="Tess One")
    ta2 = member(course, Role.TA, email="ta2@uni.edu", full_name="Theo Two")
    students = [
        member(course, email=f"s{i}@uni.edu", full_name=f"Student Number{i}") for i in range(6)
    ]
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    q = qs.questions.get(key="why-8pct")
    other = Question.objects.create(
        question_set=qs,
        key="why-else",
        kind=Question.Kind.WRITTEN,
        prompt="What would you profile next?",
        position=99,
        points=q.points,
    )
    for n, s in enumerate(students):
        answer_submit(actor=s, question=q, answers={0: f"Amdahl's law caps it ({n % 2})."})
    return course, ta1, ta2, students, qs, q, other


def _people(students: list[User]) -> list[str]:
    return [s.email for s in students] + [s.get_full_name() for s in students]


def test_with_names_hidden_no_name_or_email_reaches_the_grader(lab) -> None:  # type: ignore[no-untyped-def]
    course, ta1, _ta2, students, qs, q, _other = lab
    page_url = f"/c/{course.code}/questions/{qs.key}/written/{q.key}/"
    shown = as_user(ta1).get(page_url).content.decode()
    assert any(p in shown for p in _people(students))  # the control: names are there by default
    as_user(ta1).post(f"/c/{course.code}/questions/{qs.key}/hide-names/", {"hide": "1"})
    for url in (page_url, page_url + "?show=ungraded", f"/c/{course.code}/questions/{qs.key}/"):
        page = as_user(ta1).get(url).content.decode()
        assert [p for p in _people(students) if p in page] == [], url
    searched = as_user(ta1).get(page_url + f"?q={students[0].email}").content.decode()
    assert "No answers match" in searched  # an e-mail finds nobody
    assert "Amdahl" in as_user(ta1).get(page_url + "?q=amdahl").content.decode()


def test_a_ta_given_a_question_sees_theirs_and_can_ask_for_all(lab) -> None:  # type: ignore[no-untyped-def]
    course, ta1, ta2, _students, qs, q, other = lab
    set_url = f"/c/{course.code}/questions/{qs.key}/"
    as_user(ta1).post(f"{set_url}written/{q.key}/grader/", {"grader": str(ta2.pk)})
    as_user(ta1).post(f"{set_url}written/{other.key}/grader/", {"grader": str(ta1.pk)})
    card = as_user(ta2).get(set_url).content.decode().split('id="written-grading"')[1]
    card = card.split("</section>")[0]
    assert f"written/{q.key}/" in card
    assert f"written/{other.key}/" not in card
    assert "1 more for others" in card
    everything = as_user(ta2).get(set_url + "?all=1").content.decode()
    assert f"written/{other.key}/" in everything
    refused = as_user(ta1).post(
        f"{set_url}written/{q.key}/grader/", {"grader": "999999"}, follow=True
    )
    assert "TAs or instructors" in refused.content.decode()
    q.refresh_from_db()
    assert q.grader == ta2


def test_the_set_page_shows_each_written_questions_progress(lab) -> None:  # type: ignore[no-untyped-def]
    course, ta1, _ta2, students, qs, q, _other = lab
    set_url = f"/c/{course.code}/questions/{qs.key}/"
    assert "0 of 6" in as_user(ta1).get(set_url).content.decode()
    item = q.rubric_items.first()
    assert item is not None
    marks_apply(actor=ta1, question=q, student_ids=[s.pk for s in students[:4]], add=[item.pk])
    page = as_user(ta1).get(set_url).content.decode()
    assert "4 of 6" in page
    assert 'value="4"' in page


def test_grading_assignment_and_names_hidden_over_the_api(lab) -> None:  # type: ignore[no-untyped-def]
    """The API reads and changes who grades what and anonymity as the set's page does: the same
    services (audited, refused the same way), staff only."""
    from rest_framework.test import APIClient

    from apps.core.models import AuditEvent

    course, ta1, ta2, students, qs, q, other = lab
    base = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/"
    api = APIClient()
    api.force_authenticate(ta1)
    got = api.post(f"{base}written/{q.key}/grader/", {"grader": ta2.pk}, format="json")
    assert got.status_code == 200, got.content
    assert got.json() == {
        "question": q.key,
        "grader": {"id": ta2.pk, "email": ta2.email, "name": "Theo Two"},
    }
    refused = api.post(f"{base}written/{q.key}/grader/", {"grader": students[0].pk}, format="json")
    assert refused.status_code == 400
    assert "TAs or instructors" in refused.json()["detail"]
    assert api.post(f"{base}names-hidden/", {"hidden": True}, format="json").json() == {
        "set": qs.key,
        "hide_names": True,
    }
    assert AuditEvent.objects.filter(action="grading.names_hidden").count() == 1
    read = api.get(f"{base}written/").json()
    assert read["hide_names"] is True
    rows = {r["question"]: r for r in read["questions"]}
    assert rows[q.key]["grader"]["email"] == ta2.email
    assert (rows[q.key]["graded"], rows[q.key]["answered"]) == (0, 6)
    assert rows[other.key]["grader"] is None
    assert {g["email"] for g in read["graders"]} == {ta1.email, ta2.email}
    # the page shows what the API changed
    page = as_user(ta1).get(f"/c/{course.code}/questions/{qs.key}/?all=1").content.decode()
    assert "Names are hidden" in page
    student = APIClient()
    student.force_authenticate(students[0])
    assert student.get(f"{base}written/").status_code == 403
    assert student.post(f"{base}names-hidden/", {"hidden": False}, format="json").status_code == 403
