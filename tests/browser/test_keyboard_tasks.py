"""The course's core tasks done with the keyboard alone, in Chromium, on the demo term (live
where the task needs an open window): from the
top of the page, the skip link, then Tab (and Space, Enter, the arrow keys) only — never the
mouse. Every stop on the way shows a focus ring (`tab_to` checks it); the presses are counted.

Spending a slack day is in test_slack_journey.py; these are the others the course runs on:
book a checkoff, lock a lab prediction, ask for a regrade, grade a written answer, approve a
sharing window."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.autograder.models import Answer, Question, RegradeRequest, RubricMark
from apps.checkoffs.models import Booking
from apps.compute.models import SharingWindow
from apps.groups.models import Group
from apps.labs.models import StepRecord
from tests.browser.conftest import log_in, skip_to_content, tab_to

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _record(task: str, presses: int) -> None:
    """The presses each task took, for the closing notes (test-artifacts/keyboard-tasks.txt)."""
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "keyboard-tasks.txt").open("a") as out:
        out.write(f"{task}: {presses} key presses after the skip link\n")


def _accept_confirmations(page) -> list[str]:  # type: ignore[no-untyped-def]
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    return asked


def test_book_a_checkoff_by_keyboard(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    group = (
        Group.objects.filter(course=ee290_demo, dissolved_at__isnull=True)
        .exclude(checkoff_bookings__isnull=False)
        .order_by("name")
        .first()
    )
    student = group.memberships.filter(left_at__isnull=True).order_by("pk").first().user
    log_in(page, live_server, student.email)
    page.goto(f"{live_server.url}/c/{ee290_demo.code}/checkoffs/")
    skip_to_content(page)
    presses = tab_to(page, "Book…")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    presses += tab_to(page, "Yes, book it")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Booked:" in page.locator(".messages").inner_text()
    assert Booking.objects.filter(group=group, cancelled_at__isnull=True).count() == 1
    _record("book a checkoff", presses)
    assert presses <= 60, presses


def test_lock_a_lab_prediction_by_keyboard(page, live_server, ee290_live) -> None:  # type: ignore[no-untyped-def]
    """Step 1 is a choice: Tab into the radio group, the arrow keys move the choice, Tab to
    the button, Enter, and Enter again on the confirmation."""
    student = (
        Group.objects.filter(course=ee290_live, dissolved_at__isnull=True)
        .order_by("name")
        .last()
        .memberships.filter(left_at__isnull=True)
        .order_by("pk")
        .last()
        .user
    )
    StepRecord.objects.filter(record__student=student).delete()
    log_in(page, live_server, student.email)
    page.goto(f"{live_server.url}/c/{ee290_live.code}/labs/lab09-perf-engr/")
    asked = _accept_confirmations(page)
    skip_to_content(page)
    presses = 0
    while page.evaluate("() => document.activeElement.name") != "prediction":
        page.keyboard.press("Tab")
        presses += 1
        assert presses < 60, "the first choice was never reached"
    page.keyboard.press("ArrowDown")  # from A to B
    page.keyboard.press("Space")
    presses += tab_to(page, "Lock my prediction")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert asked
    assert "cannot be changed" in asked[0]
    row = StepRecord.objects.get(record__student=student, number=1)
    assert row.choice == "B"
    assert "prediction locked" in page.locator(".messages").inner_text()
    _record("lock a lab prediction", presses)


def test_ask_for_a_regrade_by_keyboard(page, live_server, celery_eager) -> None:  # type: ignore[no-untyped-def]
    """A released, graded quiz: Enter on "Ask for a regrade" opens it, Tab to the reason, type,
    Tab to send, Enter."""
    from apps.autograder.bank import BANKS, bank_load
    from apps.autograder.intake import answers_import
    from apps.autograder.passes import release, run_create
    from apps.core.models import Role
    from tests.autograder.test_grading import quiz_csv
    from tests.factories import PASSWORD, CourseFactory, member

    course = CourseFactory()
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    ta = member(course, Role.TA)
    student = member(course)
    answers_import(actor=ta, question_set=qs, data=quiz_csv([student]), commit=True)
    run_create(actor=ta, question_set=qs)
    release(actor=ta, question_set=qs)
    log_in(page, live_server, student.email, PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/questions/{qs.key}/")
    skip_to_content(page)
    presses = tab_to(page, "Ask for a regrade")
    page.keyboard.press("Enter")
    while page.evaluate("() => document.activeElement.name") != "reason":
        page.keyboard.press("Tab")
        presses += 1
        assert presses < 80, "the reason box was never reached"
    page.keyboard.type("The key uses peak FLOP/s; the question asked for the sustained rate.")
    presses += tab_to(page, "Send the request", limit=3)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    request = RegradeRequest.objects.get(student=student)
    assert "sustained rate" in request.reason
    assert "sent" in page.locator(".messages").inner_text()
    _record("ask for a regrade", presses)
    assert presses <= 80, presses


def test_grade_a_written_answer_by_keyboard(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """A TA ticks a rubric item and an answer with Space and applies it with Enter."""
    from tests.world import build_world

    world = build_world(ee290_demo)
    question = Question.objects.get(
        question_set__course=ee290_demo,
        question_set__key=world.ids["written_key"],
        key=world.ids["written_qkey"],
    )
    student = world.people["student_a"]
    Answer.objects.update_or_create(
        question=question,
        student=student,
        defaults={"raw": "Only the attention share changed, 8 % of the step."},
    )
    RubricMark.objects.filter(item__question=question).delete()
    log_in(page, live_server, "ta1@example.edu")
    page.goto(
        f"{live_server.url}/c/{ee290_demo.code}/questions/{world.ids['written_key']}/written/"
        f"{question.key}/"
    )
    skip_to_content(page)
    item = question.rubric_items.order_by("pk").first()
    presses = 0
    while (
        page.evaluate("() => document.activeElement.name + ':' + document.activeElement.value")
        != f"add:{item.pk}"
    ):
        page.keyboard.press("Tab")
        presses += 1
        assert presses < 120, "the rubric item's box was never reached"
    page.keyboard.press("Space")
    while page.evaluate("() => document.activeElement.name") != "students":
        page.keyboard.press("Tab")
        presses += 1
        assert presses < 160, "no answer's box was reached"
    page.keyboard.press("Space")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # Enter on a box of the form submits it
    assert RubricMark.objects.filter(item=item, student=student).exists()
    _record("grade a written answer", presses)
    assert presses <= 160, presses


def test_approve_a_window_by_keyboard(page, live_server, ee290_live) -> None:  # type: ignore[no-untyped-def]
    """The demo's pending window borrows a node whose group has not agreed: the override box is
    ticked with Space, then Approve with Enter."""
    window = SharingWindow.objects.get(course=ee290_live, status=SharingWindow.Status.REQUESTED)
    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{ee290_live.code}/compute/")
    skip_to_content(page)
    presses = tab_to(page, "Override")
    page.keyboard.press("Space")
    presses += tab_to(page, "Approve", limit=3)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    window.refresh_from_db()
    assert window.status == SharingWindow.Status.APPROVED
    _record("approve a window", presses)
    assert presses <= 120, presses
