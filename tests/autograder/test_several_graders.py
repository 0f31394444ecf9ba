"""Several graders per written question: the answers split among chosen TAs (evenly or by
ranges), each grader's progress, an overlap graded twice independently (the second grader sees
neither the first's marks nor changes the score), and the agreement shown to the instructor."""

from __future__ import annotations

import html

import pytest
from django.http import HttpResponse
from django.test import Client
from rest_framework.test import APIClient

from apps.autograder import splitting
from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import AnswerGrader, Grade, RubricMark, SecondMark
from apps.autograder.services import answer_submit
from apps.autograder.written import marks_apply, rows_for
from apps.core.models import Role, User
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


def text(response: HttpResponse) -> str:
    return html.unescape(response.content.decode())


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def api_as(u: User) -> APIClient:
    c = APIClient()
    c.force_authenticate(u)
    return c


@pytest.fixture
def twenty():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    prof = member(course, Role.INSTRUCTOR, email="prof@uni.edu", full_name="Pat Professor")
    ta1 = member(course, Role.TA, email="ta1@uni.edu", full_name="Tess One")
    ta2 = member(course, Role.TA, email="ta2@uni.edu", full_name="Theo Two")
    students = [member(course, email=f"s{i:02d}@uni.edu") for i in range(20)]
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    q = qs.questions.get(key="why-8pct")
    for n, s in enumerate(students):
        answer_submit(actor=s, question=q, answers={0: f"Answer number {n}: Amdahl caps it."})
    items = {i.key: i for i in q.rubric_items.all()}
    return course, prof, ta1, ta2, students, qs, q, items


def test_the_rules_split_evenly_by_ranges_and_spread_the_overlap() -> None:
    assert splitting.split_even(20, 2) == [(1, 10), (11, 20)]
    assert splitting.split_even(7, 3) == [(1, 3), (4, 5), (6, 7)]
    assert splitting.parse_ranges(["1-5", "6–20"], 20) == [(1, 5), (6, 20)]
    with pytest.raises(ValueError, match="Answers 6–8 are given to nobody"):
        splitting.parse_ranges(["1-5", "9-20"], 20)
    with pytest.raises(ValueError, match="Answer 5 is in two ranges"):
        splitting.parse_ranges(["1-5", "5-20"], 20)
    assert splitting.overlap_picks(20, 10) == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert splitting.rubric_step([1, 1, -0.5]) == 0.5
    agreed = splitting.agreement([(2, 2), (2, 1.5), (2, 1)], 0.5)
    assert (agreed.n, agreed.exact, agreed.within_step) == (3, 1, 2)


def test_a_question_split_between_two_tas_with_agreement_on_ten_double_graded(twenty) -> None:  # type: ignore[no-untyped-def]
    course, prof, ta1, ta2, _students, qs, q, items = twenty
    set_url = f"/c/{course.code}/questions/{qs.key}/"
    page_url = f"{set_url}written/{q.key}/"
    p = f"split-{q.key}"
    done = as_user(prof).post(
        f"{page_url}split/",
        {f"{p}-graders": [str(ta1.pk), str(ta2.pk)], f"{p}-ranges": "", f"{p}-overlap": "10"},
        follow=True,
    )
    assert "20 answers split among 2 grader(s); 10 graded twice." in text(done)
    first = {g: set() for g in (ta1.pk, ta2.pk)}
    second = {g: set() for g in (ta1.pk, ta2.pk)}
    for a in AnswerGrader.objects.filter(question=q):
        (second if a.second else first)[a.grader_id].add(a.student_id)
    assert [len(first[ta1.pk]), len(first[ta2.pk])] == [10, 10]
    assert [len(second[ta1.pk]), len(second[ta2.pk])] == [5, 5]
    assert not second[ta2.pk] & first[ta2.pk]  # never one's own answer twice

    # Each TA's page opens on their own ten answers.
    mine = text(as_user(ta1).get(page_url))
    assert "your 10 answers" in mine
    assert mine.count("answer-group") == 10

    # The first graders grade their shares in full (2 of 2).
    full = [items["small-share"].pk, items["profile-first"].pk]
    for ta in (ta1, ta2):
        marks_apply(actor=ta, question=q, student_ids=sorted(first[ta.pk]), add=full)

    # The second grader sees the overlap answers with no marks: not the first grader's.
    overlap_ta2 = sorted(second[ta2.pk])
    blind = text(as_user(ta2).get(page_url + "?share=second"))
    assert blind.count("answer-group") == 5
    assert blind.count("not graded yet") == 5
    assert 'name="second" value="1"' in blind

    # Second gradings, through the page's form: 7 the same (2), 2 within one step (1.5: the
    # rubric's smallest change is 0.5), 1 further off (1).
    plan = [full] * 7 + [[*full, items["wrong-cause"].pk]] * 2 + [[items["small-share"].pk]]
    overlap = [(s, ta) for ta in (ta1, ta2) for s in sorted(second[ta.pk])]
    counted_before = RubricMark.objects.count()
    for (student_id, ta), add in zip(overlap, plan, strict=True):
        r = as_user(ta).post(
            f"{page_url}marks/",
            {"students": str(student_id), "add": [str(i) for i in add], "second": "1"},
        )
        assert r.status_code == 302
    assert SecondMark.objects.count() == 7 * 2 + 2 * 3 + 1
    assert RubricMark.objects.count() == counted_before  # the second grading never counts
    rows = rows_for(q, [s for s, _ in overlap])
    assert {r["fraction"] for r in rows} == {1.0}  # the first grader's marks stand

    # The instructor reads the agreement; a TA does not.
    card = text(as_user(prof).get(set_url + "?all=1"))
    assert (
        "Agreement on 10 answers graded twice: exact 7 of 10 (70 %), "
        "within one rubric step 9 of 10 (90 %)."
    ) in card
    assert "3 to resolve" in card
    assert "Tess One: 10 of 10 graded; second grading 5 of 5" in card
    assert "Theo Two: 10 of 10 graded; second grading 5 of 5" in card
    assert "Agreement on" not in text(as_user(ta1).get(set_url + "?all=1"))

    # The API says the same.
    base = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/"
    [split] = api_as(prof).get(f"{base}written/").json()["splits"]
    assert split["agreement"] == {"n": 10, "exact": 7, "within_step": 9}
    assert {g["grader"]["email"]: (g["share"], g["graded"]) for g in split["graders"]} == {
        "ta1@uni.edu": (10, 10),
        "ta2@uni.edu": (10, 10),
    }
    assert api_as(ta1).get(f"{base}written/").json()["splits"][0]["agreement"] is None
    theirs = api_as(ta2).get(f"{base}written/{q.key}/?share=second").json()
    assert sorted(int(s) for g in theirs["results"] for s in g["students"]) == overlap_ta2

    # A TA cannot second-grade an answer not given to them.
    not_theirs = sorted(first[ta1.pk] - second[ta2.pk])[0]
    refused = api_as(ta2).post(
        f"{base}written/{q.key}/marks/",
        {"students": [not_theirs], "add": full, "second": True},
        format="json",
    )
    assert refused.status_code == 403


def test_a_split_by_ranges_over_the_api_and_refusals(twenty) -> None:  # type: ignore[no-untyped-def]
    course, _prof, ta1, ta2, students, qs, q, _items = twenty
    url = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/{q.key}/split/"
    ok = api_as(ta1).post(url, {"graders": [ta1.pk, ta2.pk], "ranges": ["1-5", "6-20"]}, "json")
    assert ok.status_code == 200, ok.content
    assert ok.json() == {
        "question": q.key,
        "answers": 20,
        "shares": [[ta1.pk, 1, 5], [ta2.pk, 6, 20]],
        "overlap": 0,
    }
    assert AnswerGrader.objects.filter(question=q, grader=ta1).count() == 5
    gap = api_as(ta1).post(url, {"graders": [ta1.pk, ta2.pk], "ranges": ["1-5", "9-20"]}, "json")
    assert gap.status_code == 400
    assert "Answers 6–8 are given to nobody" in gap.json()["detail"]
    twice = api_as(ta1).post(url, {"graders": [ta1.pk, ta2.pk], "ranges": ["1-5", "5-20"]}, "json")
    # It mentions the overlap, but the fault is in the ranges, and the error names that field.
    assert (twice.json()["field"], twice.status_code) == ("ranges", 400)
    many = api_as(ta1).post(url, {"graders": [ta1.pk, ta2.pk], "overlap": 21}, "json")
    assert (many.json()["field"], many.status_code) == ("overlap", 400)
    alone = api_as(ta1).post(url, {"graders": [ta1.pk], "overlap": 3}, "json")
    assert "at least two graders" in alone.json()["detail"]
    student = api_as(students[0]).post(url, {"graders": [ta1.pk]}, "json")
    assert student.status_code == 403
    assert AnswerGrader.objects.filter(question=q, grader=ta1).count() == 5  # unchanged
    assert not Grade.objects.exists()
