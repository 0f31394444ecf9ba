"""How long loading the EE 290 course file takes, first time and re-run, and how many queries
a student's dashboard costs. Prints figures; never passes or fails.

Runs on a throwaway SQLite file unless DATABASE_URL is set.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
tmp = tempfile.mkdtemp()
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"

import django  # noqa: E402
import yaml  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.core.models import User  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from apps.setup.demo import demo_load  # noqa: E402
from bench.common import bare_page_ms  # noqa: E402
from bench.results import record  # noqa: E402

call_command("migrate", verbosity=0)
text = (ROOT / "courses" / "ee290-sp26.yaml").read_text()

t0 = time.perf_counter()
cf = parse_course_file(text)
t1 = time.perf_counter()
report = course_load(cf=cf)
t2 = time.perf_counter()
course_load(cf=parse_course_file(text))
t3 = time.perf_counter()
demo_load(course=report.course)
t4 = time.perf_counter()
print(f"database             {connection.vendor}")
print(f"parse + validate     {1000 * (t1 - t0):8.1f} ms")
print(f"first load           {1000 * (t2 - t1):8.1f} ms")
print(f"re-load (no change)  {1000 * (t3 - t2):8.1f} ms")
print(f"demo people (43)     {1000 * (t4 - t3):8.1f} ms")

client = Client()
client.force_login(User.objects.get(email="student01@example.edu"))
client.get("/c/ee290-sp26/")  # warm
runs = 50
with CaptureQueriesContext(connection) as ctx:
    t5 = time.perf_counter()
    for _ in range(runs):
        client.get("/c/ee290-sp26/")
    t6 = time.perf_counter()
bare = bare_page_ms(client)
record("course load", "student dashboard", 1000 * (t6 - t5) / runs, "ms", floor=bare)
t = time.perf_counter()
yaml.safe_load(text)  # the floor of parse + validate: reading the YAML alone
record(
    "course load",
    "parse + validate",
    1000 * (t1 - t0),
    "ms",
    floor=1000 * (time.perf_counter() - t),
)
print(
    f"student dashboard    {1000 * (t6 - t5) / runs:8.1f} ms/page, "
    f"{len(ctx.captured_queries) / runs:.0f} queries/page"
)
