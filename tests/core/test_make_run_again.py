"""`make run`, twice, on one database, as a newcomer does: each step in a fresh process on the
SQLite file `make run` uses, Celery eager and e-mail to the console (the embedded default).

Between the two starts the demo is used the ordinary way — a group renamed, a slack day spent,
a group of the published peer-review round dissolved (its re-paired reviewers are e-mailed by a
task queued by name, which a fresh process must have registered) — and the second start keeps
all of it. Neither start prints a line that reads like trouble (WARNING, ERROR, a traceback,
a library's chatter) — the console of a normal start is quiet."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.peers.run import free_port

ROOT = Path(__file__).resolve().parents[2]
COURSE = "ee290-sp26"

USE = """
from apps.calendar.models import Assignment
from apps.core.models import Course, User
from apps.groups.models import Group
from apps.groups.services import group_dissolve, group_rename
from apps.peerreview.models import PeerAssignment, PeerRound
from apps.slackdays.services import slack_apply
from django.utils import timezone

course = Course.objects.get(code="%(code)s")
staff = User.objects.get(email="instructor@example.edu")
student = User.objects.get(email="student01@example.edu")
mine = Group.objects.get(course=course, memberships__user=student, memberships__left_at=None)
group_rename(actor=staff, group=mine, name="Renamed Busters")
a3 = Assignment.objects.get(course=course, code="A3")
slack_apply(actor=student, course=course, assignment_id=a3.pk)
published = PeerRound.objects.filter(course=course, published_at__isnull=False).first()
reviewed = PeerAssignment.objects.filter(round=published).exclude(reviewee=mine).first().reviewee
group_dissolve(actor=staff, course=course, group_id=reviewed.pk)
print("DISSOLVED", reviewed.name)
"""

STATE = """
from apps.core.models import Course
from apps.groups.models import Group
from apps.slackdays.models import LedgerEntry
course = Course.objects.get(code="%(code)s")
print("TERM", course.term, course.calendar_shift_days)
print("GROUPS", sorted(Group.objects.filter(course=course, dissolved_at=None).values_list("name", flat=True)))
print("SPENT", LedgerEntry.objects.filter(account__course=course).count())
"""


def _env(db: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "EMAIL_HOST", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(DATABASE_URL=f"sqlite:///{db}", DJANGO_SETTINGS_MODULE="courseops.settings.dev")
    return env


def _manage(db: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(db),
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _start(db: Path) -> str:
    """What `make run` does before it serves (the same command, without --serve)."""
    return _manage(db, "first_look", "courses/ee290-sp26.yaml")


def _serve(db: Path) -> tuple[str, float]:
    """`make run` whole: the same command serving on a free port, stopped once the log-in page
    answers; returns everything it printed, the development server's banner included."""
    port = free_port()
    command = ["manage.py", "first_look", "courses/ee290-sp26.yaml", "--serve", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(
        [sys.executable, *command],
        cwd=ROOT,
        env=_env(db),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    started = time.monotonic()
    try:
        while time.monotonic() - started < 120:
            assert proc.poll() is None, "make run's server exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as r:
                    assert r.status == 200
                    served_in = time.monotonic() - started
                    break
            except OSError:
                time.sleep(0.3)
        else:
            raise AssertionError("the log-in page did not answer within 120 s")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    return output, served_in


NOISE = re.compile(
    r"WARNING|ERROR|CRITICAL|Traceback|Resource '.*' is already loaded|No hostname was supplied|\] succeeded in"
)


def _noise(output: str) -> list[str]:
    """Lines of a normal start that read like trouble (a newcomer stops at them)."""
    return [line for line in output.splitlines() if NOISE.search(line)]


@pytest.mark.timeout(900)
def test_make_run_starts_again_on_a_used_demo_and_keeps_what_was_done(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    first = _start(db)
    assert "Moved ee290-sp26's dates by" in first
    assert _noise(first) == []
    assert _noise(_manage(db, "check_course", COURSE)) == []
    used = _manage(db, "shell", "-c", USE % {"code": COURSE})
    dissolved = used.split("DISSOLVED ", 1)[1].splitlines()[0]
    assert "NotRegistered" not in used
    assert "Subject: " in used
    assert "peer review" in used.lower()
    before = _manage(db, "shell", "-c", STATE % {"code": COURSE})
    assert "Renamed Busters" in before
    assert dissolved not in before

    second, served_in = _serve(db)
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "make-run-second-start.txt").write_text(
        f"second make run: the log-in page answered {served_in:.1f} s after the command started\n"
    )
    assert _noise(second) == []
    assert "already loaded; nothing changed" in second
    assert "Moved" not in second
    assert "Already up to date; nothing changed." in second  # the file, read in the demo's frame
    assert "student01@example.edu" in second  # the logins are printed again
    after = _manage(db, "shell", "-c", STATE % {"code": COURSE})
    assert after == before
