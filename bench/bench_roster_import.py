"""Roster import speed: preview and commit of a 2,000-student class list (target < 10 s), then
the no-op re-import. Prints figures; never passes or fails. SQLite unless DATABASE_URL is set."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3")
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from apps.core.models import Course, Membership, Role, User  # noqa: E402
from apps.roster.services import roster_commit, roster_upload  # noqa: E402
from bench.common import db_floor  # noqa: E402
from bench.results import record as keep  # noqa: E402

call_command("migrate", verbosity=0)
stamp = int(time.time())
course = Course.objects.create(code=f"bench-{stamp}", title="Bench", term="Spring 2026")
staff = User.objects.create_user(f"staff-{stamp}@example.edu", "x")
Membership.objects.create(user=staff, course=course, role=Role.INSTRUCTOR)

n = 2000
rows = ["Name,Student ID,Email Address,Role"] + [
    f'"Student{i:04d}, Pat",{stamp % 100000:05d}{i:05d},pat{i:04d}.{stamp}@example.edu,Student'
    for i in range(n)
]
data = "\n".join(rows).encode()

for label in ("first import", "re-import (no change)"):
    first = label == "first import"
    t0 = time.perf_counter()
    record, preview = roster_upload(actor=staff, course=course, filename="class.csv", data=data)
    t1 = time.perf_counter()
    roster_commit(actor=staff, record=record)
    t2 = time.perf_counter()
    s = preview.summary()
    print(
        f"{label:<24} {n:,} rows: preview {t1 - t0:.2f} s, commit {t2 - t1:.2f} s, total "
        f"{t2 - t0:.2f} s (added {s['added']}, unchanged {s['unchanged']}) on {connection.vendor}"
    )
    if first:  # the database's floor for the same bytes and the rows they add (user + member)
        floor = db_floor(data, rows[0].split(","), 2 * n)
        keep("roster", f"import {n:,} students", t2 - t0, "s", floor=floor)
