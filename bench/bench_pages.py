"""Page weight and time at course scale: 2,000 students in 400 groups (built in bulk with
tests/bigcourse.py on the EE 290 calendar), each list page and endpoint fetched in-process as a
student and as staff: median time over 15 fetches, HTML/JSON size, SQL queries. Prints figures;
never passes or fails. Uses PostgreSQL (a throwaway `courseops_bench_pages` database) when
127.0.0.1:5432 answers, else SQLite.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import bare_page_ms, course_pages, port_answers  # noqa: E402
from bench.results import record  # noqa: E402

if port_answers(5432):
    subprocess.run(
        ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", "courseops_bench_pages"],
        check=False,
        capture_output=True,
    )
    subprocess.run(
        ["createdb", "-h", "127.0.0.1", "-U", "postgres", "courseops_bench_pages"],
        check=False,
        capture_output=True,
    )
    os.environ["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/courseops_bench_pages"
else:
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
os.environ["DEBUG"] = "false"  # templates cached, as in production
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

call_command("migrate", verbosity=0)
t0 = time.perf_counter()
cf = parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
course = course_load(cf=cf).course
people = build_big_course(course, 2000)
print(
    f"built 2,000 students in 400 groups in {time.perf_counter() - t0:.1f} s ({connection.vendor})"
)

PAGES = course_pages(course.code)
print(f"{'page':<26}{'median ms':>10}{'KB':>9}{'queries':>9}")
for who, pages in PAGES.items():
    client = Client()
    client.force_login(people[who])
    bare = bare_page_ms(client)  # the floor: a page with no data, same client and person
    print(f"{'(floor: a page with no data)':<26}{bare:>10.1f}")
    for label, url in pages:
        client.get(url)
        times = []
        for _ in range(15):
            t = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - t) * 1000)
        with CaptureQueriesContext(connection) as ctx:
            client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        print(
            f"{label:<26}{statistics.median(times):>10.1f}{len(response.content) / 1000:>9.1f}{len(ctx.captured_queries):>9}"
        )
        record("pages", label, statistics.median(times), "ms", floor=bare)
