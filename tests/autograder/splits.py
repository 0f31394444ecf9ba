"""A course whose written question two TAs share, for the tests of split grading: the people,
the answers in a known order (answer i is students[i-1]'s), and clients signed in as them."""

from __future__ import annotations

import html
from typing import Any

from django.http import HttpResponse
from django.test import Client

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.services import answer_submit
from apps.core.models import Role, User
from tests.factories import CourseFactory, member


def signed_in(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def page_text(response: HttpResponse) -> str:
    return html.unescape(response.content.decode())


def answered_by(n: int, tag: str = "") -> tuple[Any, ...]:
    """(course, prof, ta1 "Tess One", ta2 "Theo Two", students, lab09 set, its why-8pct) with
    each of the n students' answers saved in order; `tag` prefixes every e-mail."""
    course = CourseFactory()
    prof = member(course, Role.INSTRUCTOR, email=f"{tag}prof@uni.edu", full_name="Pat Professor")
    ta1 = member(course, Role.TA, email=f"{tag}ta1@uni.edu", full_name="Tess One")
    ta2 = member(course, Role.TA, email=f"{tag}ta2@uni.edu", full_name="Theo Two")
    students = [member(course, email=f"{tag}s{i:02d}@uni.edu") for i in range(n)]
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    q = qs.questions.get(key="why-8pct")
    for i, s in enumerate(students):
        answer_submit(actor=s, question=q, answers={0: f"Answer number {i}: Amdahl caps it."})
    return course, prof, ta1, ta2, students, qs, q
