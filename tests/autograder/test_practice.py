"""Practice sets: a check is graded at once against the student's own variant with the graded
sets' parser, units and tolerances; a unit that cannot be read is refused naming it; new numbers
give a new key; attempts are kept; nothing reaches the gradebook; the bank refuses a practice set
that claims an assignment."""

from __future__ import annotations

import pytest
import yaml
from django.test import Client

from apps.autograder import practice
from apps.autograder.bank import BANKS, bank_load
from apps.autograder.banklint import bank_problems
from apps.autograder.models import PracticeAttempt
from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db
BANK = BANKS / "roofline-practice.yaml"


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def drill():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    ada = member(course, email="ada@uni.edu")
    member(course, Role.TA)
    qs = bank_load(course=course, path=BANK)
    return course, ada, qs, qs.questions.get(key="decode-practice")


def test_a_check_says_right_or_wrong_at_once_against_the_students_own_numbers(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, qs, q = drill
    url = f"/c/{course.code}/questions/{qs.key}/"
    _, keys = practice.variant(q, ada, 0)
    key_ms = keys[0]
    wrong = as_user(ada).post(f"{url}practice/{q.key}/check/", {f"{q.key}-0": f"{key_ms * 3}"})
    assert wrong.status_code == 302
    page = as_user(ada).get(url).content.decode()
    assert "Not right yet" in page
    as_user(ada).post(f"{url}practice/{q.key}/check/", {f"{q.key}-0": f"{key_ms / 1000} s"})
    page = as_user(ada).get(url).content.decode()
    assert "✓ Right" in page  # seconds converted to the part's milliseconds, as when graded
    assert "2 checks so far" in page
    refused = (
        as_user(ada)
        .post(f"{url}practice/{q.key}/check/", {f"{q.key}-0": "38 GB"}, follow=True)
        .content.decode()
    )
    assert "ms" in refused
    assert PracticeAttempt.objects.filter(student=ada).count() == 2


def test_new_numbers_give_a_new_key_and_the_old_answer_is_then_wrong(drill) -> None:  # type: ignore[no-untyped-def]
    _course, ada, _qs, q = drill
    params0, keys0 = practice.variant(q, ada, 0)
    for _ in range(5):  # a draw can repeat a value: step until the numbers change
        n = practice.new_variant(actor=ada, question=q)
        params, keys = practice.variant(q, ada, n)
        if params != params0:
            break
    assert params != params0
    old = practice.check(actor=ada, question=q, answers={0: f"{keys0[0]}"})
    assert old.fraction < 1
    new = practice.check(actor=ada, question=q, answers={0: f"{keys[0]}"})
    assert new.fraction == 1
    assert new.variant == n


def test_practice_never_reaches_the_gradebook_and_the_api_answers(drill) -> None:  # type: ignore[no-untyped-def]
    course, ada, qs, q = drill
    _, keys = practice.variant(q, ada, 0)
    api = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/practice/{q.key}/"
    right = as_user(ada).post(
        api + "check/", {"answers": [f"{keys[0]} ms"]}, content_type="application/json"
    )
    assert right.status_code == 200, right.content
    assert right.json()["right"] is True
    assert right.json()["checks"] == 1
    drawn = as_user(ada).post(api + "variant/", content_type="application/json")
    assert drawn.json()["variant"] == 1
    me = as_user(ada).get(f"/api/v1/courses/{course.code}/gradebook/me/").json()
    assert "roofline" not in str(me).lower()
    graded = bank_load(course=course, path=BANKS / "a1-numbers.yaml")
    refused = as_user(ada).post(
        f"/api/v1/courses/{course.code}/question-sets/{graded.key}/practice/allreduce/check/",
        {"answers": ["1"]},
        content_type="application/json",
    )
    assert refused.status_code == 409
    listing = as_user(ada).get(f"/c/{course.code}/questions/").content.decode()
    assert "practice: checked at once" in listing
    assert f"1 of {qs.questions.count()} answered" in listing  # its checks count as answers


def test_the_bank_refuses_a_practice_set_that_claims_an_assignment() -> None:
    spec = yaml.safe_load(BANK.read_text())
    assert bank_problems(spec) == []
    assert bank_problems({**spec, "assignment": "A1"}) == [
        "a practice set belongs to no assignment (practice never counts in a grade)"
    ]
    assert bank_problems({**spec, "practice": "yes"}) == ["practice is true or false"]


def _checked_bank(tmp_path, keep: str):  # type: ignore[no-untyped-def]
    spec = yaml.safe_load((BANKS / "a1-numbers.yaml").read_text())
    spec["checks"] = {"allowed": 2, "keep": keep}
    path = tmp_path / "a1-checked.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize(("keep", "graded_points"), [("best", 1.0), ("last", 0.0)])
def test_a_graded_set_allows_n_checks_and_grades_the_answer_its_rule_keeps(  # type: ignore[no-untyped-def]
    tmp_path, keep, graded_points, celery_eager, django_capture_on_commit_callbacks
) -> None:
    from apps.autograder.models import Answer, Grade
    from apps.autograder.passes import run_create
    from apps.autograder.services import instance_for

    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    ada = member(course, email="ada@uni.edu")
    ta = member(course, Role.TA)
    qs = bank_load(course=course, path=_checked_bank(tmp_path, keep))
    q = qs.questions.get(key="allreduce")
    key = instance_for(q, ada).keys[0]
    url = f"/c/{course.code}/questions/{qs.key}/"
    assert "Check allreduce (2 of 2 left)" in as_user(ada).get(url).content.decode()
    as_user(ada).post(f"{url}practice/{q.key}/check/", {"allreduce-0": f"{key}"})
    as_user(ada).post(f"{url}practice/{q.key}/check/", {"allreduce-0": f"{key * 5}"})
    page = as_user(ada).get(url).content.decode()
    assert "Last check: ✗ not right yet" in page
    assert "(0 of 2 left)" in page
    third = as_user(ada).post(f"{url}practice/{q.key}/check/", {"allreduce-0": "1"}, follow=True)
    assert "used your 2 checks" in third.content.decode()
    assert PracticeAttempt.objects.filter(student=ada, question=q).count() == 2
    kept = Answer.objects.get(student=ada, question=q)
    assert float(kept.raw) == pytest.approx(key if keep == "best" else key * 5)
    with django_capture_on_commit_callbacks(execute=True):
        run_create(actor=ta, question_set=qs)
    grade = Grade.objects.get(student=ada, question=q)
    assert grade.score == pytest.approx(graded_points * q.points)
