"""A similarity check keeps its pairs when their groups change afterwards (apps/integrity/
invariants.py): the pair still names the groups as they were, the page still ranks it, and
`check_course` holds; a pair naming a group that was not live when the check was made is named
by the check."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from apps.core.invariants import run_checks
from apps.core.models import Role
from apps.groups import services as groups
from apps.groups.models import Group
from apps.integrity.models import SimilarityCheck, SimilarityPair
from tests.factories import member
from tests.integrity.test_similarity import (
    _client,
    _run,
    course_groups,  # noqa: F401 - the fixture `world` is made from
    folders_zip,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(course_groups: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    return course_groups


def _checked(world: dict[str, Any], capture: Any) -> tuple[Any, Any]:
    client = _client(world["ta"])
    sent = _run(client, world["course"].code, folders_zip(), capture)
    return client, sent["Location"]


def test_a_pair_survives_its_groups_merged_and_dissolved(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course, g = world["course"], world["groups"]
    client, url = _checked(world, django_capture_on_commit_callbacks)
    top = SimilarityPair.objects.order_by("-percent").first()
    assert top is not None
    assert {top.group_a.name, top.group_b.name} == {"Alpha", "Bravo"}
    instructor = member(course, Role.INSTRUCTOR)
    groups.group_merge(
        actor=instructor, course=course, source_id=g["Alpha"].pk, target_id=g["Charlie"].pk
    )
    groups.group_dissolve(actor=instructor, course=course, group_id=g["Bravo"].pk)
    assert Group.objects.get(pk=g["Bravo"].pk).dissolved_at is not None
    top.refresh_from_db()
    assert (top.group_a_id, top.group_b_id) == (g["Alpha"].pk, g["Bravo"].pk)
    assert "Alpha ↔ Bravo" in client.get(url).content.decode()
    assert run_checks(course.pk) == []


def test_the_check_names_a_pair_of_a_group_made_after_the_check(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = world["course"]
    _checked(world, django_capture_on_commit_callbacks)
    check = SimilarityCheck.objects.get()
    pair = SimilarityPair.objects.order_by("-percent").first()
    assert pair is not None
    assert run_checks(course.pk) == []
    Group.objects.filter(pk=pair.group_a_id).update(
        created_at=check.created_at + dt.timedelta(minutes=1)
    )
    found = run_checks(course.pk)
    assert any(f"similarity pair #{pair.pk}" in v.detail for v in found), found
    Group.objects.filter(pk=pair.group_a_id).update(
        created_at=check.created_at - dt.timedelta(days=1),
        dissolved_at=check.created_at - dt.timedelta(hours=1),
    )
    found = run_checks(course.pk)
    assert any(f"similarity pair #{pair.pk}" in v.detail for v in found), found
