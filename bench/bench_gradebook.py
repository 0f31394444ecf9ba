"""The staff gradebook at course scale: two courses on the EE 290 file, 40 and 2,000 students (in
groups of 5, built in bulk with tests/bigcourse.py), with project scores imported per group and
enhancements and participation per student (CSV import through the service, timed). Prints, for
each size, the median time over 10 fetches of the staff gradebook page, its size and its SQL
query count (the same at both sizes is the point), the students API page and the full CSV export.
Uses a throwaway PostgreSQL database `courseops_bench_gradebook` when 127.0.0.1:5432 answers, else
SQLite. Never passes or fails.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import BARE_PAGE, db_floor, port_answers  # noqa: E402
from bench.results import record as keep  # noqa: E402

DB = "courseops_bench_gradebook"
if port_answers(5432):
    for cmd in ("dropdb", "createdb"):
        args = [
            cmd,
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            *(["--if-exists"] if cmd == "dropdb" else []),
            DB,
        ]
        subprocess.run(args, check=False, capture_output=True)
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
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

from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.gradebook import selectors, services  # noqa: E402
from apps.groups.models import Group  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

call_command("migrate", verbosity=0)
rng = random.Random(290)


def build(n: int, tag: str):  # type: ignore[no-untyped-def]
    cf = parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
    cf = cf.model_copy(
        update={"course": cf.course.model_copy(update={"code": f"ee290-{tag}"}), "compute": None}
    )
    course = course_load(cf=cf).course
    people = build_big_course(course, n, tag=tag)
    groups = Group.objects.filter(course=course).values_list("name", flat=True)
    by_group = "group,project-technical,project-impact\n" + "".join(
        f"{g},{rng.uniform(55, 100):.1f},{rng.uniform(40, 100):.1f}\n" for g in groups
    )
    by_student = "email,assignments-enhancements,participation\n" + "".join(
        f"{e},{rng.uniform(50, 100):.1f},{rng.uniform(50, 100):.1f}\n"
        for e in selectors.students_of(course).values_list("email", flat=True)
    )
    t = time.perf_counter()
    for name, data in (("groups.csv", by_group), ("students.csv", by_student)):
        record, plan = services.import_upload(
            actor=people["ta"], course=course, filename=name, data=data.encode()
        )
        assert plan.ok, plan.problems[:3]
        services.import_commit(actor=people["ta"], course=course, import_id=record.pk)
    took = time.perf_counter() - t
    print(
        f"{n:>5} students: imported {len(groups)} group rows and {n} student rows in {took:.2f} s"
    )
    if n >= 1000:  # the floor: the same bytes and as many score rows straight into a table
        floor = db_floor(by_student.encode(), ["email", "a", "b"], 2 * n) + db_floor(
            by_group.encode(), ["group", "a", "b"], 2 * len(groups)
        )
        keep("gradebook", f"import scores, {n:,} students", took, "s", floor=floor)
    return course, people


def measure(user, url: str, runs: int = 10) -> tuple[float, int, int]:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    response = client.get(url)  # warm
    count = [0]

    def counter(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        count[0] += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counter):
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = client.get(url)
        if r.streaming:
            b"".join(r.streaming_content)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000, len(body), count[0]


for n, tag in ((40, "gb40"), (2000, "gb2000")):
    course, people = build(n, tag)
    bare, _, _ = measure(people["ta"], BARE_PAGE)  # the floor: a page with no data
    print(f"{n:>5} students: {'(floor: a page with no data)':<28} {bare:7.1f} ms")
    for label, url in (
        ("staff gradebook page", f"/c/{course.code}/gradebook/"),
        ("  … sorted by total, page 3", f"/c/{course.code}/gradebook/?sort=-total&page=3"),
        ("students API page", f"/api/v1/courses/{course.code}/gradebook/students/"),
        ("full CSV export (plain)", f"/c/{course.code}/gradebook/export.csv"),
    ):
        ms, size, queries = measure(people["ta"], url, runs=5 if "export" in url else 10)
        print(
            f"{n:>5} students: {label:<28} {ms:7.1f} ms  {size / 1000:7.1f} KB  {queries:3d} "
            "queries"
        )
        if n >= 1000:
            keep("gradebook", f"{label.strip(' …')}, {n:,} students", ms, "ms", floor=bare)
print(f"({connection.vendor}, {os.cpu_count()} cores)")
