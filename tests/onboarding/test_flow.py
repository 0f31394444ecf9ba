"""The questionnaire as students and staff meet it: answer until the close, decisions e-mailed,
40 students' wishes turned into groups that exist once staff accept them."""

from __future__ import annotations

import datetime as dt
import random

import pytest
import time_machine
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from apps.groups.models import Group, GroupMembership
from apps.onboarding import matching, services
from apps.onboarding.models import QuestionnaireResponse
from tests.factories import member

pytestmark = pytest.mark.django_db
OPEN = dt.datetime(2026, 1, 21, 18, tzinfo=dt.UTC)


def _answers(rng: random.Random, emails: list[str], me: str) -> dict[str, object]:
    from apps.onboarding.defaults import RESEARCH_DIRECTIONS

    return {
        "interests": rng.sample(RESEARCH_DIRECTIONS, rng.randint(1, 3)),
        "hours": "8–12",
        "gpu": str(rng.randint(1, 5)),
        "distributed": "2",
        "teammates": ", ".join(rng.sample([e for e in emails if e != me], rng.randint(0, 2))),
    }


@time_machine.travel(OPEN, tick=False)
def test_forty_students_answer_and_the_accepted_suggestion_makes_groups_of_four_to_six(
    ee290,
) -> None:
    course = ee290
    staff = member(course, Role.TA)
    students = [
        member(course, email=f"s{i:02d}@example.edu", full_name=f"Student {i:02d}")
        for i in range(40)
    ]
    emails = [s.email for s in students]
    services.questionnaire_setup(actor=staff, course=course)
    rng = random.Random(290)
    for s in students:
        services.response_save(actor=s, course=course, raw=_answers(rng, emails, s.email))
    # two mutual pairs and a mutual triangle, on top of the random wishes
    for a, b in ((0, 1), (2, 3), (4, 5), (5, 6), (4, 6)):
        for x, y in ((a, b), (b, a)):
            r = QuestionnaireResponse.objects.get(student=students[x])
            r.answers["teammates"] = sorted({*r.answers.get("teammates", []), emails[y]})
            r.save()
    suggestion = services.suggestion_make(actor=staff, course=course, seed=1)
    assert sorted(len(g) for g in suggestion.groups)[0] >= 4
    assert all(4 <= len(g) <= 6 for g in suggestion.groups)
    assert sum(len(g) for g in suggestion.groups) == 40
    people, _ = services.suggestion_pool(course)
    wishes, interests = services.suggestion_inputs(course, people)
    p = matching.MatchingProblem(people, wishes, interests, seed=1)
    assert (
        suggestion.stats["mutual_kept"]
        == suggestion.stats["mutual_pairs"]
        == len(matching.mutual_pairs(p))
    )
    made = services.suggestion_accept(actor=staff, course=course, suggestion_id=suggestion.pk)
    assert len(made) == len(suggestion.groups)
    together = dict(
        GroupMembership.objects.filter(course=course, left_at__isnull=True).values_list(
            "user_id", "group_id"
        )
    )
    assert len(together) == 40
    assert together[students[4].pk] == together[students[5].pk] == together[students[6].pk]
    assert all(
        4 <= Group.objects.get(pk=g.pk).memberships.filter(left_at__isnull=True).count() <= 6
        for g in made
    )
    with pytest.raises(Conflict, match="already accepted"):
        services.suggestion_accept(actor=staff, course=course, suggestion_id=suggestion.pk)


def test_answers_until_the_close_and_one_response_per_student(ee290) -> None:
    course = ee290
    staff = member(course, Role.TA)
    student = member(course)
    services.questionnaire_setup(actor=staff, course=course)
    with time_machine.travel(OPEN, tick=False):
        with pytest.raises(services.AnswerProblems) as bad:
            services.response_save(
                actor=student, course=course, raw={"gpu": "9", "teammates": "not-an-email"}
            )
        assert set(bad.value.problems) == {"interests", "hours", "gpu", "distributed", "teammates"}
        services.response_save(
            actor=student,
            course=course,
            raw={"interests": ["Optimizers"], "hours": "over 16", "gpu": "3", "distributed": "1"},
        )
        services.response_save(
            actor=student,
            course=course,
            raw={
                "interests": ["Optimizers", "Agents and applications"],
                "hours": "over 16",
                "gpu": "4",
                "distributed": "1",
            },
        )
        assert QuestionnaireResponse.objects.filter(student=student).count() == 1
        assert QuestionnaireResponse.objects.get(student=student).answers["gpu"] == 4
        with pytest.raises(NotAllowed):
            services.response_save(actor=staff, course=course, raw={})
    with (
        time_machine.travel(dt.datetime(2026, 1, 29, tzinfo=dt.UTC), tick=False),
        pytest.raises(Conflict, match="closed Tue Jan 27"),
    ):
        services.response_save(
            actor=student,
            course=course,
            raw={"interests": ["Optimizers"], "hours": "8–12", "gpu": "3", "distributed": "1"},
        )


def test_only_a_question_nobody_answered_offers_remove(ee290) -> None:  # type: ignore[no-untyped-def]
    """The service refuses to remove an answered question, so the page does not offer it."""
    course = ee290
    staff = member(course, Role.TA)
    student = member(course)
    services.questionnaire_setup(actor=staff, course=course)
    services.question_add(
        actor=staff,
        course=course,
        kind="text",
        prompt="Favourite kernel?",
        options=[],
        required=False,
    )
    with time_machine.travel(OPEN, tick=False):
        services.response_save(
            actor=student,
            course=course,
            raw={"interests": ["Optimizers"], "hours": "over 16", "gpu": "3", "distributed": "1"},
        )
    c = Client()
    c.force_login(staff)
    page = c.get(f"/c/{course.code}/questionnaire/").content.decode()
    sections = page.split('<section class="card"><h2>')
    answered = next(x for x in sections if x.startswith("How many hours"))
    assert "question-remove" not in answered and "/remove/" not in answered  # noqa: PT018
    assert "it has answers, so it cannot be removed" in answered
    unanswered = next(x for x in sections if x.startswith("Favourite kernel?"))
    assert ">remove</button>" in unanswered


def test_decisions_are_emailed_and_students_see_only_their_own(ee290, celery_eager) -> None:
    course = ee290
    staff = member(course, Role.INSTRUCTOR)
    a, b = member(course), member(course)
    services.questionnaire_setup(actor=staff, course=course)
    with time_machine.travel(OPEN, tick=False):
        services.response_save(
            actor=b,
            course=course,
            raw={
                "interests": ["Optimizers"],
                "hours": "8–12",
                "gpu": "3",
                "distributed": "1",
                "notes": "SECRET-NOTE-B",
            },
        )
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        services.decision_set(
            actor=staff, course=course, student_id=a.pk, decision="waitlisted", note="place likely"
        )
    assert [m.to for m in mail.outbox] == [[a.email]]
    assert "waitlist" in mail.outbox[0].body
    assert "place likely" in mail.outbox[0].body
    client = APIClient()
    client.force_authenticate(a)
    mine = client.get(f"/api/v1/courses/{course.code}/questionnaire/").json()
    assert mine["decision"] == "waitlisted"
    assert "SECRET-NOTE-B" not in str(mine)
    assert client.get(f"/api/v1/courses/{course.code}/questionnaire/people/").status_code == 403
    c = Client()
    c.force_login(staff)
    assert (
        "SECRET-NOTE-B" not in c.get(f"/c/{course.code}/questionnaire/").content.decode()
    )  # only counts


@time_machine.travel(OPEN, tick=False)
def test_mutual_wishes_whose_sizes_do_not_split_still_get_a_suggestion_that_says_so(
    ee290,
) -> None:
    """13 students as two mutual circles of 5 and three others: 13 splits only as 4 + 4 + 5, so
    both circles cannot stay whole. Staff get groups anyway, and the page says why not every
    mutual pair is together (this used to be refused as "cannot be split")."""
    course = ee290
    staff = member(course, Role.TA)
    students = [member(course, email=f"c{i:02d}@example.edu") for i in range(13)]
    emails = [s.email for s in students]
    services.questionnaire_setup(actor=staff, course=course)
    rng = random.Random(13)
    for s in students:
        raw = {**_answers(rng, emails, s.email), "teammates": ""}  # wishes come below
        services.response_save(actor=s, course=course, raw=raw)
    for circle in (range(5), range(5, 10)):
        for x in circle:
            r = QuestionnaireResponse.objects.get(student=students[x])
            r.answers["teammates"] = sorted(emails[y] for y in circle if y != x)
            r.save()
    suggestion = services.suggestion_make(actor=staff, course=course, seed=3)
    assert sorted(len(g) for g in suggestion.groups) == [4, 4, 5]
    assert suggestion.stats["mutual_pairs"] == 20
    assert suggestion.stats["mutual_kept"] == 16  # one circle whole, four of the other together
    client = Client()
    client.force_login(staff)
    page = client.get(f"/c/{course.code}/questionnaire/suggestions/").content.decode()
    assert "mutual wishes kept: <strong>16 of 20</strong>" in page
    assert "these 13 people do not split into groups of 4–6" in page


def test_suggesting_when_everyone_has_a_group_says_so(ee290_demo) -> None:
    staff = member(ee290_demo, Role.TA)
    client = Client()
    client.force_login(staff)
    url = f"/c/{ee290_demo.code}/questionnaire/suggestions/make/"
    page = client.post(url, {"seed": "1"}, follow=True).content.decode()
    assert "Nobody is waiting for a group: every student is in one." in page


def test_staff_download_the_people_they_filtered_as_csv_in_constant_queries(ee290) -> None:
    """The people page's list as a spreadsheet: the filters hold, each row says what the page
    says (answered, interests, wishes, decision and note, the time in course time with its zone),
    a free-text answer stays out, and 30 students cost the queries 3 do."""
    import csv
    import io

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.core.timefmt import format_instant
    from apps.onboarding.models import EnrollmentDecision

    course = ee290
    staff = member(course, Role.INSTRUCTOR)
    services.questionnaire_setup(actor=staff, course=course)
    people = [member(course, email=f"p{i:02d}@example.edu") for i in range(30)]
    with time_machine.travel(OPEN, tick=False):
        raw = {"interests": ["Optimizers"], "hours": "8–12", "gpu": "3", "distributed": "1"}
        services.response_save(
            actor=people[0],
            course=course,
            raw={**raw, "teammates": "p01@example.edu", "notes": "SECRET-NOTE-0"},
        )
    services.decision_set(
        actor=staff, course=course, student_id=people[0].pk, decision="admitted", note="welcome"
    )
    c = Client()
    c.force_login(staff)
    url = f"/c/{course.code}/questionnaire/people/"
    assert 'format=csv" download>CSV of these students' in c.get(url).content.decode()

    def download(query: str) -> tuple[list[dict[str, str]], int]:
        with CaptureQueriesContext(connection) as queries:
            response = c.get(f"{url}?{query}&format=csv")
            text = b"".join(response.streaming_content).decode()
        assert response["Content-Type"].startswith("text/csv")
        assert "SECRET-NOTE-0" not in text
        return list(csv.DictReader(io.StringIO(text))), len(queries)

    (admitted,), few = download("decision=admitted")
    decided = EnrollmentDecision.objects.get(student=people[0])
    assert admitted["email"] == "p00@example.edu"
    assert admitted["answered"] == "yes"
    assert (admitted["interests"], admitted["teammate wishes"]) == ("Optimizers", "p01@example.edu")
    assert (admitted["decision"], admitted["note"]) == ("Admitted", "welcome")
    assert admitted["decided"] == format_instant(decided.decided_at, course.timezone)
    everyone, many = download("show=")
    assert len(everyone) == 30
    assert sum(r["answered"] == "no" for r in everyone) == 29
    assert many == few, (few, many)


def test_a_seed_that_is_no_whole_number_or_too_large_is_named(ee290) -> None:
    """A 25-digit seed answered 500 before; a word was read as 0 without a word said."""
    course = ee290
    staff = member(course, Role.INSTRUCTOR)
    services.questionnaire_setup(actor=staff, course=course)
    c = Client()
    c.force_login(staff)
    for typed, says in [("9" * 25, "from 0 to 1,000,000"), ("seven", "is not a whole number")]:
        page = c.post(
            f"/c/{course.code}/questionnaire/suggestions/make/", {"seed": typed}, follow=True
        )
        assert page.status_code == 200
        assert says in page.content.decode()
    with pytest.raises(DomainError, match="from 0 to"):
        services.suggestion_make(actor=staff, course=course, seed=-1)
