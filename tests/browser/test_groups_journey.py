"""Two students form a group in a real browser: one creates it, the other joins with the code."""

from __future__ import annotations

import pytest

from apps.core.models import User
from tests.browser.conftest import log_in, open_from_menu
from tests.factories import PASSWORD, member, open_course

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_create_a_group_then_a_classmate_joins_with_the_code(page, live_server, browser) -> None:  # type: ignore[no-untyped-def]
    course = open_course(code="ee290-test")
    member(course, email="ada@uni.edu", full_name="Ada Okafor")
    member(course, email="bo@uni.edu", full_name="Bo Li")
    log_in(page, live_server, "ada@uni.edu", PASSWORD)
    open_from_menu(page, "Group & node", "My group")
    page.get_by_label("Group name").fill("Ring Reduce")
    page.get_by_role("button", name="Create group").click()
    code = page.locator("#join-code").inner_text()
    assert len(code) == 8

    second = browser.new_context().new_page()
    log_in(second, live_server, "bo@uni.edu", PASSWORD)
    open_from_menu(second, "Group & node", "My group")
    second.get_by_label("Join code").fill(code.lower()[:4] + "-" + code.lower()[4:])
    second.get_by_role("button", name="Join").click()
    members = second.get_by_role("list", name="Members")
    assert "Ada Okafor" in members.inner_text()
    assert "Bo Li" in members.inner_text()
    assert "You joined Ring Reduce." in second.locator(".messages").inner_text()
    assert User.objects.get(email="bo@uni.edu").group_memberships.get().group.name == "Ring Reduce"
    second.context.close()
