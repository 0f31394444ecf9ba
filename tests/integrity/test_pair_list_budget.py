"""The pair list (API and page) reads one page of pairs in SQL, without the files' text: the
same number of queries, the same response size and about the same memory for 15 pairs as for
300, each file 40,000 characters (#70: every pair and both files' full text were loaded per
request, up to 400,000 characters a file)."""

from __future__ import annotations

import tracemalloc

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core.models import Role, User
from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile
from tests.factories import CourseFactory, GroupFactory, member

pytestmark = pytest.mark.django_db

TEXT = "def f(x):\n    return x + 1\n" * 1_500  # ~40,000 characters


def _check(groups: int) -> tuple[User, SimilarityCheck]:
    course = CourseFactory()
    ta = member(course, Role.TA)
    gs = [GroupFactory(course=course, name=f"G{i:03d}") for i in range(groups)]
    check = SimilarityCheck.objects.create(
        course=course, title="A2", source="folders", status="done", inputs_hash="c" * 64
    )
    files = SubmittedFile.objects.bulk_create(
        SubmittedFile(
            check_run=check,
            group=g,
            submission=g.name,
            path=f"{g.name}/train.py",
            kind="code",
            language="python",
            sha256="0" * 64,
            text=TEXT,
        )
        for g in gs
    )
    SimilarityPair.objects.bulk_create(
        SimilarityPair(
            check_run=check,
            group_a=gs[i],
            group_b=gs[j],
            percent=1 - (i * groups + j) / groups**2,  # a strict order: G000↔G001 first
            percent_a=0.5,
            percent_b=0.5,
            file_a=files[i],
            file_b=files[j],
        )
        for i in range(groups)
        for j in range(i + 1, groups)
    )
    return ta, check


def _measure(user: User, url: str) -> tuple[int, int, int, list[str], dict]:  # type: ignore[type-arg]
    api = APIClient()
    api.force_authenticate(user)
    api.get(url)  # warm caches
    tracemalloc.start()
    with CaptureQueriesContext(connection) as ctx:
        response = api.get(url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert response.status_code == 200, response.content[:500]
    sql = [q["sql"] for q in ctx.captured_queries]
    return len(sql), len(response.content), peak, sql, response.json()


def test_the_pair_list_reads_one_page_without_file_texts_at_two_sizes() -> None:
    small_ta, small = _check(6)  # 15 pairs
    large_ta, large = _check(25)  # 300 pairs
    assert large.pairs.count() == 300

    def url(c: SimilarityCheck, page: int = 1) -> str:
        return f"/api/v1/courses/{c.course.code}/similarity/{c.pk}/pairs/?page={page}&page_size=10"

    q_small, size_small, peak_small, _, _ = _measure(small_ta, url(small))
    q_large, size_large, peak_large, sql, body = _measure(large_ta, url(large, 3))
    assert q_large == q_small, (q_small, q_large)
    assert abs(size_large - size_small) < 200, (size_small, size_large)
    # 300 pairs of two 40,000-character files would be 24 MB of text; one page of paths is not
    assert peak_large < peak_small + 2_000_000, (peak_small, peak_large)
    assert not [q for q in sql if '"integrity_submittedfile"."text"' in q]
    # ranks follow the whole ordering: page 3 of 10 starts at 21
    assert body["count"] == 300
    assert [r["rank"] for r in body["results"]] == list(range(21, 31))
    assert body["results"][0]["group_a"] == "G000"
    assert body["results"][0]["file_a"] == "G000/train.py"


def test_the_check_page_lists_pairs_without_file_texts() -> None:
    from django.test import Client

    ta, check = _check(8)
    client = Client()
    client.force_login(ta)
    with CaptureQueriesContext(connection) as ctx:
        page = client.get(f"/c/{check.course.code}/integrity/{check.pk}/").content.decode()
    assert "G000 ↔ G001" in page
    assert not [q for q in ctx.captured_queries if '"integrity_submittedfile"."text"' in q["sql"]]
