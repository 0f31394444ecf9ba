"""Enhancements as the syllabus words them ("add questions or reframe the programmatic part"): a
reframing describes the changed programmatic part of an assignment and links its starter code;
it is checked, reviewed and credited like a question proposal, and never becomes a bank question."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.autograder.models import Question
from apps.contributions.models import QuestionProposal
from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db
CHANGE = (
    "Replace A3's fixed batch size with a sweep over 4 sizes and plot MFU against it, so the "
    "roofline knee shows up in the students' own data."
)


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def test_a_reframing_is_checked_reviewed_and_credited_without_a_bank_question() -> None:
    course = CourseFactory()
    a3 = AssignmentFactory(course=course, code="A3")
    ta = member(course, Role.TA)
    ada = member(course, email="ada@uni.edu")
    page = f"/c/{course.code}/contributions/"
    form = {"kind": "reframing", "prompt": CHANGE, "assignment": str(a3.pk), "ai_used": "no"}
    refused = as_user(ada).post(page + "propose/", {**form, "link": "ftp://example.org/x"})
    assert "https:// address" in refused.content.decode()
    short = as_user(ada).post(
        page + "propose/", {**form, "prompt": "Bigger batch.", "link": "https://github.com/ada/a3"}
    )
    assert "at least 40 characters" in short.content.decode()
    no_assignment = as_user(ada).post(
        page + "propose/", {**form, "assignment": "", "link": "https://github.com/ada/a3"}
    )
    assert "Choose the assignment it reframes." in no_assignment.content.decode()
    assert not QuestionProposal.objects.exists()

    made = as_user(ada).post(page + "propose/", {**form, "link": "https://github.com/ada/a3-sweep"})
    assert made.status_code == 302
    p = QuestionProposal.objects.get()
    assert (p.kind, p.assignment, p.link) == ("reframing", a3, "https://github.com/ada/a3-sweep")
    queue = as_user(ta).get(page).content.decode()
    assert "Reframes <strong>A3</strong>" in queue
    assert "https://github.com/ada/a3-sweep" in queue
    as_user(ta).post(page + f"{p.pk}/review/", {"decision": "accept"})
    p.refresh_from_db()
    assert p.status == "accepted"
    assert p.question is None
    assert not Question.objects.filter(question_set__course=course).exists()
    exported = as_user(ta).get(page + "?format=csv")
    credits = b"".join(exported.streaming_content).decode()  # type: ignore[attr-defined]
    assert "ada@uni.edu" in credits
    api = as_user(ada).get(f"/api/v1/courses/{course.code}/contributions/").json()
    assert api["results"][0]["link"] == "https://github.com/ada/a3-sweep"
    assert api["results"][0]["assignment"] == a3.pk
