"""The instructor sees which overlap answers the two graders scored differently, not only how
many: the set's page lists them 20 a page with both scores and graders and a link to the answer
(which opens alone), the API gives the same list on each split, a TA sees neither, and the page
and API run the same number of queries with 6 such answers as with 24."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.autograder.fairgrading import second_marks_apply, share_of, split_save
from apps.autograder.written import marks_apply
from tests.autograder.splits import answered_by, signed_in

pytestmark = pytest.mark.django_db


as_user = signed_in


def _split_with_disagreements(n: int, tag: str = ""):  # type: ignore[no-untyped-def]
    """n answers split between two TAs, n/2 graded twice, every second grading one item short
    of the first (so each overlap answer is a disagreement: 2 against 1)."""
    course, prof, ta1, ta2, students, qs, q = answered_by(n, tag)
    split_save(actor=prof, question=q, grader_ids=[ta1.pk, ta2.pk], overlap=n // 2)
    items = {i.key: i.pk for i in q.rubric_items.all()}
    for ta in (ta1, ta2):
        first, second = share_of(q, ta)
        full = [items["small-share"], items["profile-first"]]
        marks_apply(actor=ta, question=q, student_ids=sorted(first), add=full)
        second_marks_apply(
            actor=ta, question=q, student_ids=sorted(second), add=[items["small-share"]]
        )
    return course, prof, ta1, qs, q, students


def _rows(page: str) -> list[list[str]]:
    table = page.split('aria-label="Answers graded differently"')[1].split("</table>")[0]
    body = table.split("<tbody>")[1]
    return [
        [
            " ".join(re.sub(r"<[^>]+>", " ", c).split())
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)
        ]
        for r in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    ]


def test_the_instructor_lists_the_answers_graded_differently_page_and_api() -> None:
    course, prof, ta1, qs, q, students = _split_with_disagreements(48)
    set_url = f"/c/{course.code}/questions/{qs.key}/?all=1"
    first = html.unescape(as_user(prof).get(set_url).content.decode())
    assert "exact 0 of 24" in first
    assert "24 to resolve" in first
    rows = _rows(first)
    assert len(rows) == 20
    assert rows[0][0] == f"{q.key} answer 1"
    assert rows[0][1:] == ["Tess One: 2", "Theo Two: 1"]
    assert "page 1 of 2" in first
    second = html.unescape(as_user(prof).get(set_url + "&disagreements=2").content.decode())
    assert len(_rows(second)) == 4

    # The link opens that one answer, with the marks that count.
    link = re.search(
        r'href="([^"]*\?answer=(\d+))"', first.split("Answers graded differently", 1)[1]
    )
    assert link is not None
    assert int(link.group(2)) == students[0].pk
    one = as_user(prof).get(html.unescape(link.group(1))).content.decode()
    assert one.count("answer-group") == 1
    assert "Answer number 0:" in one

    # With names hidden the link names the answer by its anonymous key, never the account id.
    as_user(prof).post(f"/c/{course.code}/questions/{qs.key}/hide-names/", {"hide": "1"})
    hidden = html.unescape(as_user(prof).get(set_url).content.decode())
    link = re.search(
        r'href="([^"]*\?answer=([^"&]+))"', hidden.split("Answers graded differently", 1)[1]
    )
    assert link is not None
    assert link.group(2).startswith("a-")
    one = as_user(prof).get(html.unescape(link.group(1))).content.decode()
    assert one.count("answer-group") == 1
    assert "Answer number 0:" in one
    as_user(prof).post(f"/c/{course.code}/questions/{qs.key}/hide-names/", {"hide": "0"})

    # The API gives the same list on the split; a TA gets neither the list nor the table.
    api = APIClient()
    api.force_authenticate(prof)
    base = f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/"
    [split] = api.get(base).json()["splits"]
    listed = split["disagreements"]
    assert len(listed) == 24
    assert [(d["answer"], d["first_score"], d["second_score"]) for d in listed[:1]] == [
        (1, 2.0, 1.0)
    ]
    assert (listed[0]["first_grader"]["email"], listed[0]["second_grader"]["email"]) == (
        "ta1@uni.edu",
        "ta2@uni.edu",
    )
    page_rows = [(r[0], r[1], r[2]) for r in rows]
    api_rows = [
        (
            f"{q.key} answer {d['answer']}",
            f"{d['first_grader']['name']}: {d['first_score']:g}",
            f"{d['second_grader']['name']}: {d['second_score']:g}",
        )
        for d in listed[:20]
    ]
    assert page_rows == api_rows
    assert "Answers graded differently" not in as_user(ta1).get(set_url).content.decode()
    api.force_authenticate(ta1)
    assert api.get(base).json()["splits"][0]["disagreements"] == []


def test_the_list_costs_the_same_queries_at_two_sizes() -> None:
    counts = []
    for n in (12, 48):
        course, prof, _ta1, qs, _q, _students = _split_with_disagreements(n, tag=f"n{n}-")
        api = APIClient()
        api.force_authenticate(prof)
        client = as_user(prof)
        url = f"/c/{course.code}/questions/{qs.key}/?all=1"
        client.get(url)  # warm the per-process caches
        with CaptureQueriesContext(connection) as page:
            assert client.get(url).status_code == 200
        with CaptureQueriesContext(connection) as listed:
            assert (
                api.get(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/")
            ).status_code == 200
        counts.append((len(page), len(listed)))
    assert counts[0] == counts[1], counts
