"""A TA uploads a similarity check and watches it: the page follows the real worker from
waiting to done by itself, with no reload by the TA (#70: the notice had no id, so the script
that refreshes it never attached and the page stayed on "Waiting for a worker")."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.core.models import Role
from tests.browser.conftest import log_in
from tests.factories import PASSWORD, CourseFactory, GroupFactory, member
from tests.integrity import planted
from tests.integrity.test_similarity import zip_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_check_page_follows_the_worker_to_done_without_a_reload(
    page, live_server, celery_worker_process, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(code="cs-sim-watch")
    for name in ("Alpha", "Bravo", "Charlie"):
        GroupFactory(course=course, name=name)
    member(course, Role.TA, email="ta-sim@uni.edu")
    upload = tmp_path / "subs.zip"
    upload.write_bytes(
        zip_of(
            {
                "Alpha/train.py": planted.ORIGINAL,
                "Bravo/train.py": planted.RENAMED_COPY,
                "Charlie/train.py": planted.INDEPENDENT_TORCH,
            }
        )
    )
    log_in(page, live_server, "ta-sim@uni.edu", PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/integrity/")
    page.get_by_label("Title").fill("A2 code")
    page.get_by_label("Submissions (.zip)").set_input_files(str(upload))
    page.get_by_role("button", name="Upload and compare").click()
    status = page.get_by_role("status").filter(has_text="Waiting for a worker")
    expect(status).to_be_visible()
    celery_worker_process()  # only now is there a worker to take it
    pairs = page.get_by_role("table", name="Group pairs")
    expect(pairs).to_be_visible(timeout=60_000)  # no page.reload(): the page did it
    expect(pairs).to_contain_text("Alpha ↔ Bravo")
    expect(page.get_by_role("status").filter(has_text="Waiting for a worker")).to_have_count(0)
