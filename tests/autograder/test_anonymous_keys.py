"""While a set grades without names, nothing a TA can read leads back to a student: the answer
groups name answers by keys (not account ids, which the roster API maps to names), a search by
name finds nobody on the API as on the page, and marks still reach the right students."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import RubricItem, RubricMark
from apps.autograder.services import answer_submit
from apps.core.models import Role
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def hidden():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ta = member(course, Role.TA, email="ta1@uni.edu", full_name="Tess One")
    alice = member(course, email="alice@uni.edu", full_name="Alice Archer")
    bob = member(course, email="bob@uni.edu", full_name="Bob Baker")
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    q = qs.questions.get(key="why-8pct")
    answer_submit(actor=alice, question=q, answers={0: "Amdahl's law caps it."})
    answer_submit(actor=bob, question=q, answers={0: "The GPU waits on the loader."})
    item = RubricItem.objects.create(question=q, key="amdahl", points=1, comment="Right.")
    web = Client()
    web.force_login(ta)
    web.post(f"/c/{course.code}/questions/{qs.key}/hide-names/", {"hide": "1"})
    api = APIClient()
    api.force_authenticate(ta)
    url = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/{q.key}/"
    return course, ta, alice, bob, qs, q, item, web, api, url


def test_the_api_finds_nobody_by_name_and_gives_no_account_ids(hidden) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alice, bob, qs, q, _item, web, api, url = hidden
    assert api.get(url, {"q": "Alice"}).json()["results"] == []  # the page's rule, on the API
    assert api.get(url, {"q": "alice@uni.edu"}).json()["results"] == []
    keys = [k for g in api.get(url).json()["results"] for k in g["students"]]
    assert len(keys) == 2
    assert not {str(alice.pk), str(bob.pk)} & set(keys)
    page = web.get(f"/c/{course.code}/questions/{qs.key}/written/{q.key}/").content.decode()
    for k in keys:
        assert f'value="{k}"' in page  # the page names the answers by the same keys
    for s in (alice, bob):
        assert f'name="students" value="{s.pk}"' not in page


def test_marks_sent_by_key_reach_the_student_who_wrote_the_answer(hidden) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alice, bob, qs, q, item, web, api, url = hidden
    groups = api.get(url, {"q": "amdahl"}).json()["results"]
    assert len(groups) == 1
    r = api.post(url + "marks/", {"students": groups[0]["students"], "add": [item.pk]}, "json")
    assert r.status_code == 200, r.content
    assert set(RubricMark.objects.values_list("student_id", flat=True)) == {alice.pk}
    other = next(g for g in api.get(url).json()["results"] if "loader" in g["text"])
    web.post(
        f"/c/{course.code}/questions/{qs.key}/written/{q.key}/marks/",
        {"students": ",".join(other["students"]), "add": [str(item.pk)]},
    )
    assert set(RubricMark.objects.values_list("student_id", flat=True)) == {alice.pk, bob.pk}


def test_a_key_that_names_no_answer_is_refused_and_changes_nothing(hidden) -> None:  # type: ignore[no-untyped-def]
    course, _ta, _alice, _bob, qs, q, item, web, api, url = hidden
    good = api.get(url).json()["results"][0]["students"]
    r = api.post(url + "marks/", {"students": [*good, "a-0000"], "add": [item.pk]}, "json")
    assert r.status_code == 400
    assert "a-0000" in str(r.json())
    page = web.post(
        f"/c/{course.code}/questions/{qs.key}/written/{q.key}/marks/",
        {"students": ",".join([*good, "a-0000"]), "add": [str(item.pk)]},
        follow=True,
    ).content.decode()
    assert "Nothing was changed" in page
    assert not RubricMark.objects.exists()


def test_keys_differ_between_sets(hidden) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder.written import anonymous_key

    _course, _ta, alice, _bob, qs, _q, _item, _web, _api, _url = hidden
    assert anonymous_key(qs.pk, alice.pk) != anonymous_key(qs.pk + 1, alice.pk)
    assert anonymous_key(qs.pk, alice.pk) == anonymous_key(qs.pk, alice.pk)
