"""A department in one deployment: 20 courses of 2,000 students each on one PostgreSQL.

1. Builds one course (the EE 290 file, 2,000 students in 400 groups, tests/bigcourse.py) and
   measures its list pages and endpoints (bench.common.course_pages) as staff and as a student:
   median of 15 fetches, SQL queries.
2. Adds 19 more courses of 2,000 students each (40,000 people in all), ANALYZE, and measures the
   first course's pages again: the queries must be the same in number and the times within 20 %.
3. Lists every per-course table whose indexes do not lead with the course (a list of one course's
   rows then reads other courses' rows too).

The database gets `random_page_cost = 1.1`, the Operators guide's setting for PostgreSQL on SSDs.

`bench_department.py 5` for another number of courses. Prints figures; never passes or fails.
Needs PostgreSQL on 127.0.0.1:5432 (a throwaway `courseops_bench_department` database).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import course_pages, fresh_database, port_answers  # noqa: E402
from bench.results import record  # noqa: E402

if not port_answers(5432):
    print("skipped: needs PostgreSQL on 127.0.0.1:5432")
    sys.exit(0)
DB = "courseops_bench_department"
DB_URL = fresh_database(DB)
os.environ["DATABASE_URL"] = DB_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
os.environ["DEBUG"] = "false"  # templates cached, as in production
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.apps import apps  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.core.models import Course, User  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

COURSES = int(sys.argv[1]) if len(sys.argv) > 1 else 20
STUDENTS = 2000
FETCHES = 15
TEXT = (ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8")


def build(n: int) -> tuple[Course, dict[str, User]]:
    code = "ee290-sp26" if n == 0 else f"dept{n:02d}-sp26"
    # Static IPs are unique across the deployment: each course gets its own range.
    text = TEXT.replace("code: ee290-sp26", f"code: {code}").replace("203.0.113.", f"10.{n}.113.")
    course = course_load(cf=parse_course_file(text))
    return course.course, build_big_course(course.course, STUDENTS, tag=f"-{n:02d}")


def measure(course: Course, people: dict[str, User]) -> dict[str, tuple[float, int]]:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    out = {}
    for who, pages in course_pages(course.code).items():
        client = Client()
        client.force_login(people[who])
        for label, url in pages:
            client.get(url)
            times = []
            for _ in range(FETCHES):
                t = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t) * 1000)
            assert response.status_code == 200, (url, response.status_code)
            with CaptureQueriesContext(connection) as ctx:
                client.get(url)
            out[label] = (statistics.median(times), len(ctx.captured_queries))
    return out


call_command("migrate", verbosity=0)
# The README's setting for PostgreSQL on SSDs (every cloud disk): random reads cost about what
# sequential ones do, so the planner reads one course's rows by index instead of scanning all.
with connection.cursor() as cursor:
    cursor.execute(f"ALTER DATABASE {DB} SET random_page_cost = 1.1")
connection.close()  # the setting applies to new sessions
t0 = time.perf_counter()
first, people = build(0)
print(f"1 course of {STUDENTS:,} students built in {time.perf_counter() - t0:.1f} s")
alone = measure(first, people)
t0 = time.perf_counter()
for n in range(1, COURSES):
    build(n)
print(
    f"{COURSES - 1} more courses built in {time.perf_counter() - t0:.0f} s: "
    f"{User.objects.count():,} people, {Course.objects.count()} courses in one database"
)
crowded = measure(first, people)

print(f"\n{'page or endpoint':<26}{'1 course':>17}{f'{COURSES} courses':>18}{'time':>8}  verdict")
print(f"{'':<26}{'ms':>9}{'queries':>8}{'ms':>10}{'queries':>8}")
worst = 0.0
for label, (ms1, q1) in alone.items():
    msn, qn = crowded[label]
    ratio = msn / ms1
    worst = max(worst, ratio)
    verdict = []
    if qn != q1:
        verdict.append(f"queries {q1} → {qn}")
    if ratio > 1.2:
        verdict.append("over 20 % slower")
    print(
        f"{label:<26}{ms1:>9.1f}{q1:>8}{msn:>10.1f}{qn:>8}{ratio:>8.2f}  "
        f"{'; '.join(verdict) or 'same queries, within 20 %'}"
    )
    record("department", f"{label}, {COURSES} courses", msn, "ms", floor=ms1, target=1.2)
print(f"slowest change: ×{worst:.2f} (the floor of each: the same page with one course)")

# Per-course tables: a table with a `course` column should have an index that starts with it.
missing = []
for model in apps.get_models():
    fields = {f.name: f for f in model._meta.concrete_fields}
    if "course" not in fields:
        continue
    table = model._meta.db_table
    column = fields["course"].column
    with connection.cursor() as cursor:
        leads = {
            index["columns"][0]
            for index in connection.introspection.get_constraints(cursor, table).values()
            if index["columns"] and (index["index"] or index["unique"] or index["primary_key"])
        }
    if column not in leads:
        missing.append(table)
print(
    "per-course tables without an index that leads with the course: "
    + (", ".join(sorted(missing)) if missing else "none")
)
