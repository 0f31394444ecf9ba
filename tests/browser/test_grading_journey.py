"""A TA uploads answers, starts grading, watches progress reach the end, downloads results."""

from __future__ import annotations

import pytest

from apps.autograder.bank import BANKS, bank_load
from apps.core.models import Role
from tests.autograder.test_grading import quiz_csv
from tests.browser.conftest import log_in
from tests.factories import PASSWORD, CourseFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ta_uploads_a_csv_watches_progress_and_downloads_results(
    page, live_server, celery_eager, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(code="ee290-grading")
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    member(course, Role.TA, email="ta@uni.edu")
    students = [member(course) for _ in range(30)]
    csv_path = tmp_path / "quiz.csv"
    csv_path.write_bytes(quiz_csv(students))

    log_in(page, live_server, "ta@uni.edu", PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/questions/{qs.key}/")
    page.get_by_label("Answers (CSV)").set_input_files(str(csv_path))
    page.get_by_role("button", name="Upload and preview").click()
    assert "Preview: 30 students, 360 answers" in page.locator("#preview").inner_text()
    page.get_by_role("button", name="Confirm: store 360 answers").click()
    page.get_by_role("button", name="Grade now").click()
    progress = page.get_by_role("progressbar", name="Progress of run")
    page.wait_for_function("() => document.querySelector('progress').value >= 300")
    assert progress.get_attribute("max") == "300"
    page.get_by_role("link", name="results").click()
    assert "More FLOPS = faster" in page.locator("#misconceptions").inner_text()
    with page.expect_download() as info:
        page.get_by_role("link", name="Download for Canvas (CSV)").click()
    lines = open(info.value.path(), encoding="utf-8").read().splitlines()  # noqa: SIM115
    assert lines[1].startswith("    Points Possible")
    assert len(lines) == 2 + 30
    assert page.external_requests == []
