"""Backups proven, not described: `pg_dump` of a populated course (the demo, with slack spent, a
grading pass and allocations), restored with `pg_restore` into a fresh database, holds the same
ledger sums, grades and allocations, and `check_course` on the restored copy finds 0 violations.
This is the procedure the Operators guide (docs/operators.md, Backups) gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from apps.autograder.models import QuestionSet
from apps.autograder.passes import run_create
from apps.calendar.models import Assignment
from apps.core.models import User
from apps.slackdays.services import slack_apply
from tests.conftest import ROOT, _database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

FIGURES = {
    "ledger": "SELECT count(*), coalesce(sum(delta), 0) FROM slackdays_ledgerentry",
    "balances": "SELECT coalesce(sum(balance), 0) FROM slackdays_slackaccount",
    "grades": "SELECT count(*), coalesce(round(sum(score)::numeric, 6), 0) FROM autograder_grade",
    "allocations": "SELECT count(*), count(*) FILTER (WHERE ended_at IS NULL) "
    "FROM compute_allocation",
    "audit": "SELECT count(*) FROM core_auditevent",
}


def _figures(url: str) -> dict[str, tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return {k: conn.execute(sql).fetchone() for k, sql in FIGURES.items()}  # type: ignore[misc]


def test_a_dump_restored_into_a_fresh_database_holds_the_same_course(
    ee290_demo, celery_eager, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor != "postgresql" or not shutil.which("pg_dump"):
        pytest.fail("this test needs PostgreSQL and its client tools (pg_dump, pg_restore)")
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    last = Assignment.objects.filter(course=course).order_by("-due_at")[0]
    Assignment.objects.filter(pk=last.pk).update(due_at=timezone.now() + timezone.timedelta(days=3))
    slack_apply(actor=student, course=course, assignment_id=last.pk)
    staff = User.objects.get(email="ta1@example.edu")
    run_create(actor=staff, question_set=QuestionSet.objects.filter(course=course).first())
    source = _database_url()
    before = _figures(source)
    assert before["ledger"][0]  # something to lose: slack spent …
    assert before["grades"][0]  # … grades …
    assert before["allocations"][1]  # … and nodes held

    dump = tmp_path / "course.dump"
    env = {**os.environ, "PGPASSWORD": connection.settings_dict["PASSWORD"] or ""}
    subprocess.run(["pg_dump", "-Fc", "-f", str(dump), source], check=True, env=env)
    fresh = f"restore_{uuid.uuid4().hex[:10]}"
    server = source.rsplit("/", 1)[0]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{fresh}"')
    try:
        restored = f"{server}/{fresh}"
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "-d", restored, str(dump)],
            check=True,
            env=env,
        )
        assert _figures(restored) == before
        check = subprocess.run(
            [sys.executable, "manage.py", "check_course", course.code],
            cwd=ROOT,
            env={
                **env,
                "DATABASE_URL": restored,
                "DJANGO_SETTINGS_MODULE": "courseops.settings.dev",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr
        assert "0 violations" in check.stdout
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')
