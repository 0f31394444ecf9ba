"""Practice that teaches: after the course's number of wrong checks of one variant (3 by
default), or on "Show the solution", the variant's correct value with its unit and its worked
solution are shown, its checks end and a new variant is offered; the set list counts questions
answered correctly (never one whose last check was wrong); the gradebook never reads practice."""

from __future__ import annotations

import html

import pytest
import yaml
from django.db import connection
from django.http import HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.autograder import practice
from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import GradingPolicy, PracticeAttempt
from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db


def text(response: HttpResponse) -> str:
    return html.unescape(response.content.decode())


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def drill():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    ada = member(course, email="ada@uni.edu")
    ta = member(course, Role.TA)
    prof = member(course, Role.INSTRUCTOR)
    qs = bank_load(course=course, path=BANKS / "roofline-practice.yaml")
    return course, ada, ta, prof, qs, qs.questions.get(key="decode-practice")


def _card(page: str, qkey: str) -> str:
    return page.split(f'id="q-{qkey}"')[1].split('<li class="card"')[0]


def test_three_wrong_checks_then_the_solution_of_that_variant_then_a_new_variant(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, _ta, _prof, qs, q = drill
    url = f"/c/{course.code}/questions/{qs.key}/"
    params, keys = practice.variant(q, ada, 0)
    for n in range(3):
        card = _card(text(as_user(ada).get(url)), q.key)
        assert "Solution for these numbers" not in card
        assert f"{n} of 3 wrong checks" in card
        as_user(ada).post(f"{url}practice/{q.key}/check/", {f"{q.key}-0": f"{keys[0] * 3}"})
    card = _card(text(as_user(ada).get(url)), q.key)
    assert "Solution for these numbers" in card
    worked = practice.solution_of(q, ada, 0)
    value = worked.parts[0]["value"]
    assert value == pytest.approx(keys[0])
    assert worked.parts[0]["unit"] == "ms"
    assert " ms</strong>" in card  # the value with its unit
    assert worked.worked
    assert worked.worked[0][0] in card  # the worked solution's steps
    assert f"{params['gb']} GB" in card  # still the same numbers
    assert ">Check<" not in card  # this variant takes no more checks
    assert "New numbers" in card
    refused = as_user(ada).post(
        f"{url}practice/{q.key}/check/", {f"{q.key}-0": f"{keys[0]}"}, follow=True
    )
    assert "the solution of these numbers is shown" in text(refused)
    assert PracticeAttempt.objects.filter(student=ada, question=q).count() == 3

    as_user(ada).post(f"{url}practice/{q.key}/variant/")
    card = _card(text(as_user(ada).get(url)), q.key)
    assert "Solution for these numbers" not in card
    assert ">Check<" in card
    assert "0 of 3 wrong checks" in card
    _, new_keys = practice.variant(q, ada, 1)
    right = practice.check(actor=ada, question=q, answers={0: f"{new_keys[0]}"})
    assert right.fraction == 1
    assert right.variant == 1


def test_show_the_solution_on_request_over_the_api_and_the_course_setting(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, _ta, _prof, qs, q = drill
    api = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/practice/"
    _, keys = practice.variant(q, ada, 0)
    got = as_user(ada).post(f"{api}{q.key}/solution/", content_type="application/json")
    assert got.status_code == 200, got.content
    body = got.json()
    assert body["variant"] == 0
    assert body["parts"][0]["unit"] == "ms"
    assert body["parts"][0]["value"] == pytest.approx(keys[0])
    assert body["worked"]
    late = as_user(ada).post(
        f"{api}{q.key}/check/", {"answers": [f"{keys[0]}"]}, content_type="application/json"
    )
    assert late.status_code == 409
    # a choice question's solution is the correct option
    choice = as_user(ada).post(f"{api}bound-practice/solution/", content_type="application/json")
    assert choice.json()["parts"][0]["value"].startswith("(a) memory bandwidth")
    # the course file's number: one wrong check shows the solution
    GradingPolicy.objects.create(course=course, practice_solution_after=1)
    bubble = qs.questions.get(key="bubble-practice")
    once = (
        as_user(ada)
        .post(f"{api}{bubble.key}/check/", {"answers": ["0.99"]}, content_type="application/json")
        .json()
    )
    assert once["right"] is False
    assert once["wrong_checks"] == 1
    assert once["solution_after"] == 1
    assert once["solution"]["parts"][0]["unit"] == ""  # a fraction has no unit to show
    student = as_user(ada)
    assert student.post(f"/c/{course.code}/questions/a1/practice/x/solution/").status_code in (
        302,
        404,
    )


def test_the_count_says_answered_correctly_and_never_counts_a_wrong_last_check(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, _ta, _prof, qs, q = drill
    listing = f"/c/{course.code}/questions/"
    _, keys = practice.variant(q, ada, 0)
    practice.check(actor=ada, question=q, answers={0: f"{keys[0]}"})
    assert "1 of 3 answered correctly" in text(as_user(ada).get(listing))
    practice.check(actor=ada, question=q, answers={0: f"{keys[0] * 2}"})  # right, then wrong
    assert "0 of 3 answered correctly" in text(as_user(ada).get(listing))
    bound = qs.questions.get(key="bound-practice")
    practice.check(actor=ada, question=bound, answers={0: "b"})
    practice.check(actor=ada, question=bound, answers={0: "a"})  # wrong, then right
    assert "1 of 3 answered correctly" in text(as_user(ada).get(listing))
    api = as_user(ada).get(f"/api/v1/courses/{course.code}/question-sets/").json()
    rows = api["results"] if isinstance(api, dict) else api
    [row] = [r for r in rows if r["key"] == qs.key]
    assert row["answered"] == 1


def test_the_gradebook_never_reads_practice(drill) -> None:  # type: ignore[no-untyped-def]
    from apps.core.coursefile import CourseFileError, parse_course_file

    course, ada, ta, prof, _qs, q = drill
    _, keys = practice.variant(q, ada, 0)
    practice.check(actor=ada, question=q, answers={0: f"{keys[0]}"})
    reads = [
        (ada, f"/c/{course.code}/gradebook/"),
        (ada, f"/api/v1/courses/{course.code}/gradebook/me/"),
        (ta, f"/c/{course.code}/gradebook/"),
        (prof, f"/c/{course.code}/gradebook/export.csv"),
        (prof, f"/api/v1/courses/{course.code}/gradebook/students/"),
        (prof, f"/c/{course.code}/gradebook/students/{ada.pk}/"),
    ]
    for user, url in reads:
        with CaptureQueriesContext(connection) as ctx:
            r = as_user(user).get(url)
        assert r.status_code == 200, url
        sql = " ".join(x["sql"] for x in ctx.captured_queries)
        assert "autograder_practice" not in sql, url
        body = b"".join(r.streaming_content) if r.streaming else r.content  # type: ignore[attr-defined]
        assert b"roofline" not in body.lower(), url
    spec = yaml.safe_load(open("courses/ee290-sp26.yaml").read())  # noqa: SIM115
    spec["grading"][0]["source"] = "practice"
    with pytest.raises(CourseFileError):
        parse_course_file(yaml.safe_dump(spec))


def test_a_question_that_never_changes_is_not_locked_once_its_solution_shows(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, _ta, _prof, qs, _q = drill
    api = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/practice/bound-practice/"
    student = as_user(ada)
    early = student.post(f"{api}variant/", content_type="application/json")
    assert early.status_code == 409  # nothing to renew before the solution is shown
    assert "keep answering it" in early.json()["detail"]
    student.post(f"{api}solution/", content_type="application/json")
    refused = student.post(f"{api}check/", {"answers": ["a"]}, content_type="application/json")
    assert refused.status_code == 409
    assert "Try again" in refused.json()["detail"]
    assert "well done" not in refused.json()["detail"]
    page = text(student.get(f"/c/{course.code}/questions/{qs.key}/"))
    assert ">Try again</button>" in _card(page, "bound-practice")
    student.post(f"/c/{course.code}/questions/{qs.key}/practice/bound-practice/variant/")
    again = student.post(f"{api}check/", {"answers": ["a"]}, content_type="application/json")
    assert again.status_code == 200, again.content
    assert again.json()["right"] is True
    page = text(student.get(f"/c/{course.code}/questions/{qs.key}/"))
    assert ">Try again</button>" not in _card(page, "bound-practice")  # a fresh try, no solution
