"""One spelling per mailbox: every path that makes or matches an account stores and finds the
canonical address, the unique index holds for the person, and accounts that already fold to one
address are named for staff, never merged by guessing."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.db import IntegrityError, transaction
from django.test import Client

from apps.core.emails import canonical_email
from apps.core.invariants import run_checks
from apps.core.models import Role, User
from apps.roster.services import roster_commit, roster_upload
from tests.factories import PASSWORD, CourseFactory, member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("  ProfB@Campus.Example.EDU. ", "profb@campus.example.edu"),
        ("ada@campus.example.edu", "ada@campus.example.edu"),
        ("a@Bücher.example", "a@xn--bcher-kva.example"),
        ("STRASSE@x.example", "strasse@x.example"),
        ("not-an-address", "not-an-address"),
    ],
)
def test_the_canonical_spelling(raw: str, stored: str) -> None:
    assert canonical_email(raw) == stored


def test_a_second_spelling_of_one_mailbox_is_the_same_account() -> None:
    user = User.objects.create_user(email="ProfB@campus.example.edu.", password=PASSWORD)
    assert user.email == "profb@campus.example.edu"
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(email=" profb@CAMPUS.example.edu")
    c = Client()
    r = c.post("/accounts/login/", {"username": "PROFB@campus.example.edu.", "password": PASSWORD})
    assert r.status_code == 302
    assert c.session["_auth_user_id"] == str(user.pk)


def test_a_roster_row_with_another_spelling_matches_the_existing_account() -> None:
    course = CourseFactory()
    ta = member(course, Role.TA)
    ada = User.objects.create_user(email="ada@campus.example.edu")
    data = b"name,email,role\nAda Lovelace, Ada@Campus.Example.edu. ,student\n"
    record, preview = roster_upload(actor=ta, course=course, filename="r.csv", data=data)
    assert not preview.problems
    roster_commit(actor=ta, record=record)
    assert User.objects.filter(email__startswith="ada@").count() == 1
    assert ada.memberships.get(course=course).role == Role.STUDENT


def test_accounts_that_already_fold_to_one_address_are_listed_for_staff_not_merged() -> None:
    course = CourseFactory()
    a = member(course, Role.STUDENT)
    b = User.objects.create_user(email="second@campus.example.edu")
    c = User.objects.create_user(email="lonely@campus.example.edu")
    # As stored before the rule: two spellings of a's mailbox, and one lone odd spelling.
    User.objects.filter(pk=b.pk).update(email=a.email.upper() + ".")
    User.objects.filter(pk=c.pk).update(email="Lonely@Campus.example.edu.")
    migration = importlib.import_module("apps.core.migrations.0012_email_canonical")
    migration.canonical(django_apps, None)
    b.refresh_from_db()
    c.refresh_from_db()
    assert b.email == a.email.upper() + "."  # left as it was: staff decide
    assert c.email == "lonely@campus.example.edu"  # nobody else's: made canonical
    said = [v.detail for v in run_checks(course.pk) if v.check.startswith("one account")]
    assert len(said) == 1
    assert f"#{a.pk}" in said[0]
    assert f"#{b.pk}" in said[0]
