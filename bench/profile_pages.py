"""Where a student page's time goes: cProfile over 200 requests of each page of the read spike
(dashboard, slack page, node page, slack/me, question sets) on the 2,000-student course, in
process, DEBUG off, PostgreSQL and Redis when they answer. Prints per page the CPU ms and SQL
queries per request, then the functions with the most cumulative time over all pages.
Run it before and after a change to the hot path; it prints figures, never passes or fails.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import port_answers  # noqa: E402

# PROFILE_DB / PROFILE_REDIS_URL: a database and Redis of its own when several people bench at once.
DB = os.environ.get("PROFILE_DB", "courseops_bench_profile")
if port_answers(5432):
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", DB], check=False, capture_output=True)
    subprocess.run(["createdb", *pg, DB], check=False, capture_output=True)
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
else:
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
if port_answers(6379):
    os.environ["REDIS_URL"] = os.environ.get("PROFILE_REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
os.environ["DEBUG"] = "false"
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from apps.autograder.bank import demo_banks_load  # noqa: E402
from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

call_command("migrate", verbosity=0)
cache.clear()
course = course_load(
    cf=parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
).course
demo_banks_load(course=course)
people = build_big_course(course, 2000)
client = Client()
client.force_login(people["student"])
C, A = f"/c/{course.code}/", f"/api/v1/courses/{course.code}/"
PAGES = [
    ("dashboard", C),
    ("slack page", C + "slack/"),
    ("node page", C + "node/"),
    ("slack/me", A + "slack/me/"),
    ("question sets", C + "questions/"),
]
if os.environ.get("PROFILE_PAGES"):  # e.g. PROFILE_PAGES=dashboard; "bare" is a page with no data
    PAGES.append(("bare", "/accounts/password/change/done/"))
N = int(os.environ.get("PROFILE_REQUESTS", "200"))
if os.environ.get("PROFILE_PAGES"):  # e.g. PROFILE_PAGES=dashboard
    PAGES = [
        (label, url) for label, url in PAGES if label in os.environ["PROFILE_PAGES"].split(",")
    ]
profile = cProfile.Profile()
print(f"{'page':<16}{'CPU ms/request':>16}{'queries':>9}{'calls/request':>15}")
for label, url in PAGES:
    assert client.get(url).status_code == 200, url
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as ctx:
        client.get(url)
    if os.environ.get("PROFILE_SQL"):
        for q in ctx.captured_queries:
            print("   ", q["sql"][: int(os.environ.get("PROFILE_SQL_WIDTH", "160"))])
    queries = len(ctx.captured_queries)
    rounds = []  # timed without the profiler (its overhead is not the page's), in 5 rounds:
    for _ in range(5):  # the best round, as timeit does, since a shared VM's neighbours only add
        t = time.process_time()
        for _ in range(max(1, N // 5)):
            client.get(url)
        rounds.append((time.process_time() - t) / max(1, N // 5) * 1000)
    cpu = min(rounds)
    page_profile = cProfile.Profile()  # Python calls per request: steady where CPU ms is noisy
    page_profile.enable()
    for _ in range(N):
        client.get(url)
    page_profile.disable()
    calls = pstats.Stats(page_profile).total_calls / N  # type: ignore[attr-defined]
    profile.enable()
    for _ in range(N):
        client.get(url)
    profile.disable()
    print(f"{label:<16}{cpu:>16.1f}{queries:>9}{calls:>15,.0f}")
out = io.StringIO()
pstats.Stats(profile, stream=out).sort_stats(
    os.environ.get("PROFILE_SORT", "cumulative")
).print_stats(int(os.environ.get("PROFILE_TOP", "45")))
print(
    "\n".join(
        line
        for line in out.getvalue().splitlines()
        if "/work/" in line or "site-packages" in line or "ncalls" in line
    )
)
connection.close()
if port_answers(5432) and not os.environ.get("PROFILE_KEEP_DB"):
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", DB], check=False, capture_output=True)
