"""Every staff CSV export carries what students typed as text, never as a formula (OWASP CSV
injection): a hostile group name, person name and SID go through each export."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.passes import run_create
from apps.core.csvexport import FORMULA_TRIGGERS, safe_cell
from apps.core.models import Role
from apps.groups.models import Group
from tests.factories import CourseFactory, group_of, member

pytestmark = pytest.mark.django_db

EVIL_GROUP = '=HYPERLINK("http://evil.example","Click")'
EVIL_NAME = "@SUM(1+1)*cmd|' /C calc'!A0"
EVIL_SID = "+1-2"


def _cells(body: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(body.decode())) for cell in row]


def _assert_inert(body: bytes, *needles: str) -> None:
    cells = _cells(body)
    for needle in needles:
        assert needle not in cells, f"{needle!r} would run as a formula"
        assert "'" + needle in cells, f"{needle!r} is missing from the export"
    assert not any(c.startswith(("=", "@")) for c in cells)


@pytest.fixture
def hostile_course(django_capture_on_commit_callbacks, celery_eager):  # type: ignore[no-untyped-def]
    course = CourseFactory()
    group = group_of(course, 4)
    Group.objects.filter(pk=group.pk).update(name=EVIL_GROUP)
    evil = group.memberships.first().user  # type: ignore[union-attr]
    evil.full_name = EVIL_NAME
    evil.sid = EVIL_SID
    evil.save()
    ta = member(course, Role.TA)
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    answers_import(
        actor=ta, question_set=qs, data=f"email,q1\n{evil.email},b\n".encode(), commit=True
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = run_create(actor=ta, question_set=qs)
    client = Client()
    client.force_login(ta)
    return course, client, run


def _download(client: Client, url: str) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, url
    assert response["Content-Type"].startswith("text/csv")
    return b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]


def test_groups_export_shows_the_hostile_group_name_as_text(hostile_course) -> None:  # type: ignore[no-untyped-def]
    course, client, _ = hostile_course
    _assert_inert(
        _download(client, f"/c/{course.code}/groups/export.csv"), EVIL_GROUP, EVIL_NAME, EVIL_SID
    )


def test_roster_export_shows_hostile_names_as_text(hostile_course) -> None:  # type: ignore[no-untyped-def]
    course, client, _ = hostile_course
    _assert_inert(_download(client, f"/c/{course.code}/roster/export.csv"), EVIL_NAME, EVIL_SID)


def test_slack_balances_export_shows_the_hostile_group_as_text(hostile_course) -> None:  # type: ignore[no-untyped-def]
    course, client, _ = hostile_course
    body = _download(client, f"/c/{course.code}/slack/staff/?format=csv")
    _assert_inert(body, EVIL_GROUP, EVIL_NAME, EVIL_SID)


@pytest.mark.parametrize("fmt", ["gradescope", "canvas"])
def test_grade_exports_show_hostile_names_as_text(hostile_course, fmt: str) -> None:  # type: ignore[no-untyped-def]
    course, client, run = hostile_course
    body = _download(client, f"/c/{course.code}/grading/runs/{run.pk}/?format={fmt}")
    if fmt == "gradescope":
        _assert_inert(body, EVIL_NAME, EVIL_SID)
    else:  # Canvas writes "Last, First": the hostile name is split but must still be inert
        _assert_inert(body, EVIL_SID)


def test_plain_numbers_stay_numbers() -> None:
    assert safe_cell("-2") == "-2"
    assert safe_cell("+1.5e3") == "+1.5e3"
    assert safe_cell(-3) == -3
    assert safe_cell("-2+3") == "'-2+3"


@given(st.text())
def test_no_cell_reaches_a_spreadsheet_as_a_formula(text: str) -> None:
    cell = safe_cell(text)
    if cell.startswith(FORMULA_TRIGGERS):
        float(cell)  # only a plain number may keep its sign
