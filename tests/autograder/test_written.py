"""Written answers graded with rubric items: 40 students answer a written question of the
shipped Lab 09 bank, a TA applies items to groups of identical answers at once, and changing one
item afterwards moves every affected score — in results, totals and the regrade flow's source."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.autograder.bank import BANKS, BankError, bank_load
from apps.autograder.models import Question, RubricMark
from apps.autograder.passes import run_create
from apps.autograder.selectors import totals, visible_grades
from apps.autograder.services import answer_submit
from apps.autograder.written import answer_groups
from apps.core.errors import DomainError
from apps.core.models import Role
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db

ANSWERS = [
    "Attention was only a small share of the step, so Amdahl caps the gain.",
    "attention was only a small share of the step, so amdahl caps the gain",  # same, normalised
    "The hotspot was elsewhere: profile the whole step first, then optimise the biggest share.",
    "The benchmark must have been wrong.",
]


@pytest.fixture
def graded(celery_eager, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ta = member(course, Role.TA)
    students = [member(course) for _ in range(40)]
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    q = qs.questions.get(key="why-8pct")
    for n, s in enumerate(students):
        answer_submit(actor=s, question=q, answers={0: ANSWERS[n % 4]})
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=ta, question_set=qs)
    return course, ta, students, qs, q, run


def _scores(run, q) -> dict[int, float]:  # type: ignore[no-untyped-def]
    run.refresh_from_db()
    return dict(visible_grades(run).filter(question=q).values_list("student_id", "score"))


def test_a_written_question_graded_by_items_for_40_students_follows_an_item_change(  # type: ignore[no-untyped-def]
    graded, django_capture_on_commit_callbacks
) -> None:
    course, ta, students, qs, q, run = graded
    assert set(_scores(run, q).values()) == {0.0}  # not graded yet
    groups = answer_groups(q)
    # Identical answers (case, spaces, end punctuation) form one group of 20.
    assert [g.size for g in groups] == [20, 10, 10]
    items = {i.key: i for i in q.rubric_items.all()}
    c = Client()
    c.force_login(ta)
    page = c.get(f"/c/{course.code}/questions/{qs.key}/written/{q.key}/").content.decode()
    assert "20 answers" in page
    assert "amdahl caps the gain" in page.lower()
    url = f"/c/{course.code}/questions/{qs.key}/written/{q.key}/marks/"

    def apply(group, *keys: str) -> None:  # type: ignore[no-untyped-def]
        r = c.post(
            url,
            {"students": ",".join(map(str, group.student_ids)), "add": [items[k].pk for k in keys]},
            follow=True,
        )
        assert "Rubric updated on" in r.content.decode()

    small, hotspot, wrong = groups[0], next(g for g in groups if "hotspot" in g.text), groups[-1]
    if "benchmark" not in wrong.text:
        wrong = next(g for g in groups if "benchmark" in g.text)
    apply(small, "small-share")
    apply(hotspot, "small-share", "profile-first")
    apply(wrong, "wrong-cause")
    scores = _scores(run, q)
    by_answer = {s.pk: ANSWERS[n % 4] for n, s in enumerate(students)}
    expected = {
        ANSWERS[0]: 1.0,
        ANSWERS[1]: 1.0,
        ANSWERS[2]: 2.0,
        ANSWERS[3]: 0.0,  # -0.5 from 0 is held at 0
    }
    assert scores == {sid: expected[a] for sid, a in by_answer.items()}
    total_before = {r["student_id"]: r["score"] for r in totals(run)}

    # One item changed afterwards: every answer carrying it moves, in the same request.
    r = c.post(
        f"/c/{course.code}/questions/{qs.key}/written/{q.key}/items/{items['small-share'].pk}/",
        {"key": "small-share", "points": "0.75", "comment": items["small-share"].comment},
        follow=True,
    )
    assert "30 answer(s) carrying it re-scored" in r.content.decode()
    after = _scores(run, q)
    changed = {sid for sid in after if after[sid] != scores[sid]}
    carrying = set(
        RubricMark.objects.filter(item=items["small-share"]).values_list("student_id", flat=True)
    )
    assert changed == carrying
    assert len(changed) == 30
    assert {after[s] for s in changed} == {0.75, 1.75}
    total_after = {r["student_id"]: r["score"] for r in totals(run)}
    assert all(total_after[s] == pytest.approx(total_before[s] - 0.25) for s in changed)

    # A re-grade pass computes the same scores from the marks (nothing stale, nothing lost).
    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=qs)
    assert _scores(run, q) == after
    # The student reads the items' comments once results are released.
    from apps.autograder.passes import release

    release(actor=ta, question_set=qs)
    sc = Client()
    sc.force_login(students[2])
    mine = sc.get(f"/c/{course.code}/questions/{qs.key}/").content.decode()
    assert "profile the whole step first" in mine
    assert "+1 · Says to profile the whole step first" in mine


def test_bad_item_changes_are_refused_naming_the_field(graded) -> None:  # type: ignore[no-untyped-def]
    course, ta, _, qs, q, _ = graded
    c = Client()
    c.force_login(ta)
    url = f"/c/{course.code}/questions/{qs.key}/written/{q.key}/items/"
    for data, says in (
        (
            {"key": "Bad Key", "points": "1", "comment": "x"},
            "Key: The item&#x27;s key is up to 30 lower-case letters",
        ),
        (
            {"key": "extra", "points": "lots", "comment": "x"},
            "Score change: The score change is a number",
        ),
        ({"key": "extra", "points": "9", "comment": "x"}, "within ±2"),
        ({"key": "extra", "points": "1", "comment": " "}, "Comment: Write the comment"),
        ({"key": "small-share", "points": "1", "comment": "x"}, "already an item"),
    ):
        assert says in c.post(url, data, follow=True).content.decode()
    assert q.rubric_items.count() == 3
    marks = f"/c/{course.code}/questions/{qs.key}/written/{q.key}/marks/"
    assert (
        "Choose at least one answer" in c.post(marks, {"add": ["1"]}, follow=True).content.decode()
    )


def test_a_written_answer_longer_than_allowed_is_refused(graded) -> None:  # type: ignore[no-untyped-def]
    _, _, students, _, q, _ = graded
    with pytest.raises(DomainError, match=r"under 1,200 characters"):
        answer_submit(actor=students[0], question=q, answers={0: "x" * 1201})


def test_a_bank_whose_rubric_cannot_give_full_marks_is_refused_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    text = (
        (BANKS / "lab09-numbers.yaml")
        .read_text()
        .replace("{key: profile-first, points: 1,", "{key: profile-first, points: 0.5,")
    )
    path = tmp_path / "lab09-numbers.yaml"
    path.write_text(text)
    with pytest.raises(
        BankError, match=r"positive items add to 1\.5, under the question's 2 points"
    ):
        bank_load(course=course, path=path)
    assert not Question.objects.filter(question_set__course=course).exists()


def test_the_api_lists_groups_and_applies_marks(graded) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    course, ta, students, qs, q, run = graded
    api = APIClient()
    api.force_authenticate(ta)
    url = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/{q.key}/"
    body = api.get(url).json()
    assert body["count"] == 3
    assert [r["key"] for r in body["rubric"]] == ["small-share", "profile-first", "wrong-cause"]
    top = body["results"][0]
    item = body["rubric"][0]["id"]
    r = api.post(url + "marks/", {"students": top["students"], "add": [item]}, format="json")
    assert r.json() == {"students": 20}
    assert sorted(_scores(run, q).values()).count(1.0) == 20
    assert (
        api.post(url + "marks/", {"students": [], "add": [item]}, format="json").status_code == 400
    )
    student = APIClient()
    student.force_authenticate(students[0])
    assert student.get(url).status_code == 403
