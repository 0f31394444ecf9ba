"""A TA uploads answers, starts grading, watches progress reach the end, downloads results."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

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
    expect(page.locator("#preview")).to_contain_text(
        "Preview of quiz.csv: 30 students, 360 answers", use_inner_text=True
    )
    page.get_by_role("button", name="Confirm: store 360 answers").click()
    expect(page.locator("body")).to_contain_text(
        "Stored 360 answers from 30 students", use_inner_text=True
    )
    page.get_by_role("button", name="Grade now").click()
    progress = page.get_by_role("progressbar", name="Progress of run")
    page.wait_for_function("() => document.querySelector('progress').value >= 300")
    assert progress.get_attribute("max") == "300"
    page.get_by_role("link", name="results").click()
    expect(page.locator("#misconceptions")).to_contain_text(
        "More FLOPS = faster", use_inner_text=True
    )
    with page.expect_download() as info:
        page.get_by_role("link", name="Download for Canvas (CSV)").click()
    lines = open(info.value.path(), encoding="utf-8").read().splitlines()  # noqa: SIM115
    assert lines[1].startswith("    Points Possible")
    assert len(lines) == 2 + 30
    assert page.external_requests == []


def test_the_upload_page_waits_for_the_worker_then_shows_the_preview(
    page, live_server, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """No eager Celery here: the page shows the bar, and reloads itself into the preview once
    the worker (run below, as a worker would) has read the file."""
    from apps.autograder.models import AnswerUpload
    from apps.autograder.uploads import upload_run

    course = CourseFactory(code="ee290-upload")
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    member(course, Role.TA, email="ta2@uni.edu")
    students = [member(course) for _ in range(10)]
    csv_path = tmp_path / "late.csv"
    csv_path.write_bytes(quiz_csv(students))
    log_in(page, live_server, "ta2@uni.edu", PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/questions/{qs.key}/")
    page.get_by_label("Answers (CSV)").set_input_files(str(csv_path))
    page.get_by_role("button", name="Upload and preview").click()
    expect(page.locator("#upload")).to_contain_text("Reading the file", use_inner_text=True)
    assert page.get_by_role("progressbar", name="Rows read of late.csv").is_visible()
    upload_run(AnswerUpload.objects.get(question_set=qs).pk)
    page.wait_for_selector("#preview", timeout=15_000)
    assert "Preview of late.csv: 10 students, 120 answers" in page.locator("#preview").inner_text()
