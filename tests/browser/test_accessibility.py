"""axe-core (the engine behind Lighthouse's accessibility audit, shipped by axe-playwright-python)
on the main pages of each role: no serious or critical violation (labels, contrast, names)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STUDENT = [
    "/c/ee290-sp26/",
    "/c/ee290-sp26/slack/",
    "/c/ee290-sp26/node/",
    "/c/ee290-sp26/group/",
    "/c/ee290-sp26/calendar/",
    "/c/ee290-sp26/incidents/",
    "/c/ee290-sp26/questions/mlsysim-quiz/",
    "/calc/",
    "/calc/roofline-time/?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm",
]
STAFF = [
    "/c/ee290-sp26/",
    "/c/ee290-sp26/groups/",
    "/c/ee290-sp26/roster/",
    "/c/ee290-sp26/compute/",
    "/c/ee290-sp26/slack/staff/",
    "/c/ee290-sp26/questions/mlsysim-quiz/",
]


def _serious(page, live_server, paths: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        results = axe.run(page)
        for v in results.response["violations"]:
            if v["impact"] in {"serious", "critical"}:
                where = "; ".join(n["target"][0] for n in v["nodes"][:3])
                found.append(f"{path}: {v['id']} ({v['impact']}): {v['help']} at {where}")
    return found


def test_student_pages_have_no_serious_accessibility_violation(
    page, live_server, ee290_demo
) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student01@example.edu")
    assert _serious(page, live_server, STUDENT) == []


def test_staff_pages_have_no_serious_accessibility_violation(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "instructor@example.edu")
    assert _serious(page, live_server, STAFF) == []
