"""The pages issue 70 changed, in the states only they have, scanned like every page (axe-core
WCAG 2.1 A/AA at 1280 and 390 px, and no page wider than a phone's screen): the set page with a
split question and its agreement (instructor), a grader's second-grading view, the refusal a TA
meets on "Show names again", and a practice question showing its solution."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.autograder import practice
from apps.autograder.fairgrading import second_marks_apply, split_save
from apps.autograder.models import AnswerGrader, Question, QuestionSet
from apps.autograder.services import answer_submit
from apps.autograder.written import marks_apply, names_hidden_set
from apps.core.models import Membership, Role, User
from tests.browser.conftest import wider_than_screen
from tests.browser.test_accessibility import WIDTHS, _violations
from tests.world import World, build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


def _state(world: World) -> dict[str, tuple[User, str, int]]:
    code = world.ids["code"]
    course = world.people["instructor"].memberships.get(course__code=code).course  # type: ignore[union-attr]
    qs = QuestionSet.objects.get(course=course, key="lab09-numbers")
    q = qs.questions.get(key="why-8pct")
    ta = world.people["ta"]
    prof = world.people["instructor"]
    assert ta is not None
    assert prof is not None
    ta2 = (
        Membership.objects.filter(course=course, role=Role.TA).exclude(user=ta).first().user  # type: ignore[union-attr]
    )
    students = [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT).order_by("pk")[:8]
    ]
    for n, s in enumerate(students):
        answer_submit(actor=s, question=q, answers={0: f"Amdahl caps the gain ({n})."})
    split_save(actor=prof, question=q, grader_ids=[ta.pk, ta2.pk], overlap=4)
    item, other = list(q.rubric_items.order_by("position", "pk"))[:2]
    for grader in (ta, ta2):
        mine = list(
            AnswerGrader.objects.filter(question=q, grader=grader, second=False).values_list(
                "student_id", flat=True
            )
        )
        marks_apply(actor=grader, question=q, student_ids=mine, add=[item.pk])
        theirs = list(
            AnswerGrader.objects.filter(question=q, grader=grader, second=True).values_list(
                "student_id", flat=True
            )
        )
        # Theo's second gradings add an item: answers graded differently to list and scan.
        extra = [other.pk] if grader == ta2 else []
        second_marks_apply(actor=grader, question=q, student_ids=theirs, add=[item.pk, *extra])
    names_hidden_set(actor=prof, question_set=qs, hidden=True)
    student = world.people["student_a"]
    assert student is not None
    drill = QuestionSet.objects.filter(course=course, practice=True).first()
    assert drill is not None, "the demo course loads a practice set"
    first = drill.questions.exclude(kind=Question.Kind.WRITTEN).order_by("position").first()
    assert first is not None
    practice.solution_show(actor=student, question=first)
    base = f"/c/{code}/questions/"
    return {
        "set page, split with agreement and answers graded differently": (
            prof,
            f"{base}lab09-numbers/?all=1",
            200,
        ),
        "set page, names hidden (TA)": (ta, f"{base}lab09-numbers/", 200),
        "second grading": (ta, f"{base}lab09-numbers/written/why-8pct/?share=second", 200),
        "practice with a solution": (student, f"{base}{drill.key}/", 200),
    }


def test_the_pages_of_fair_grading_and_teaching_practice_pass_the_scans(  # type: ignore[no-untyped-def]
    browser, live_server, world
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    pages = _state(world)
    found: list[str] = []
    for width in WIDTHS:
        for name, (user, url, status) in pages.items():
            client = Client()
            client.force_login(user)
            assert client.get(url).status_code == status, name
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.add_cookies(
                [
                    {
                        "name": "sessionid",
                        "value": client.cookies["sessionid"].value,
                        "url": live_server.url,
                    }
                ]
            )
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.goto(f"{live_server.url}{url}", wait_until="load")
            found += _violations(axe, page, f"{width}px {name}")
            if width == 390:
                extra = wider_than_screen(page)
                if extra > 0:
                    found.append(f"{name}: {extra} px wider than the phone's screen")
            context.close()
    # the refusal page a TA meets (a POST answered 403 with the reason): scanned as rendered
    ta = world.people["ta"]
    client = Client()
    client.force_login(ta)
    refused = client.post(f"/c/{world.ids['code']}/questions/lab09-numbers/hide-names/")
    assert refused.status_code == 403
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    page.set_content(refused.content.decode())
    found += _violations(axe, page, "390px refusal")
    context.close()
    assert found == []
