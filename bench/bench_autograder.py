"""Autograder speed. Prints figures; never passes or fails.

1. In-process grading core: answers scored per second (target >= 200,000/s).
2. End to end: 100,000 answers (10,000 students x 10 questions; `bench_autograder.py 1000000`
   for a million) from CSV to stored grades on PostgreSQL with 2 Celery worker processes on
   Redis (targets: 100,000 in <= 5 s, 1,000,000 in <= 60 s), answers and grades counted apart;
   then a re-grade of the unchanged key, its progress 0 → 100 % of the new pass and the
   release refusals while it runs. Uses the PostgreSQL database DATABASE_URL names (adding
   a course of its own, deleting nothing), else its own `courseops_bench` (flushed first);
   skipped with a reason when PostgreSQL or Redis is down.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import db_floor, port_answers, start_worker  # noqa: E402
from bench.results import record  # noqa: E402

# DATABASE_URL (a PostgreSQL one) names the database to use; else a throwaway courseops_bench.
GIVEN_DB = os.environ.get("DATABASE_URL", "")
BENCH_DB = (
    GIVEN_DB
    if GIVEN_DB.startswith("postgres")
    else "postgres://postgres@127.0.0.1:5432/courseops_bench"
)
BENCH_REDIS = "redis://127.0.0.1:6379/13"
e2e = port_answers(5432) and port_answers(6379)
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
if e2e:
    if not GIVEN_DB.startswith("postgres"):
        subprocess.run(
            ["createdb", "-h", "127.0.0.1", "-U", "postgres", "courseops_bench"],
            capture_output=True,
            check=False,
        )
    os.environ["DATABASE_URL"] = BENCH_DB
    os.environ["REDIS_URL"] = BENCH_REDIS
else:
    import tempfile

    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"

import django  # noqa: E402

django.setup()

from apps.autograder.rules import Band, parse_answer, score_choice, score_numeric  # noqa: E402

# ---------------------------------------------------------------- 1. the core
n = 1_000_000
rng = np.random.default_rng(0)
keys = np.full(n, 0.55125)
vals = keys * rng.normal(1, 0.1, n)
bands = [Band(1.0, 0.02), Band(0.5, 0.2)]
score_numeric(vals[:1000], keys[:1000], bands)
t0 = time.perf_counter()
credit = score_numeric(vals, keys, bands)
t1 = time.perf_counter()
print(
    f"numeric scoring (vectorised)   {n / (t1 - t0):>14,.0f} answers/s  (mean credit "
    f"{credit.mean():.3f})"
)
chosen = rng.choice(list("abcd"), n).tolist()
t0 = time.perf_counter()
score_choice(chosen, {"b"})
t1 = time.perf_counter()
print(f"multiple-choice scoring        {n / (t1 - t0):>14,.0f} answers/s")
raw = [
    random.Random(i).choice(["0.56", "560 ms", "5.6e-1", "0.55 s", "abc", ""])
    for i in range(100_000)
]
t0 = time.perf_counter()
for r in raw:
    parse_answer(r, "s")
t1 = time.perf_counter()
print(
    f"parsing raw text (per answer)  {len(raw) / (t1 - t0):>14,.0f} answers/s  (done once, at "
    "intake)"
)

# ---------------------------------------------------------------- 2. end to end
if not e2e:
    print("end to end: skipped (needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379)")
    sys.exit(0)

from django.core.management import call_command  # noqa: E402

from apps.autograder.bank import BANKS, bank_load  # noqa: E402
from apps.autograder.intake import answers_import  # noqa: E402
from apps.autograder.models import Grade, GradingRun  # noqa: E402
from apps.autograder.passes import run_create  # noqa: E402
from apps.core.models import Course, Membership, Role, User  # noqa: E402
from courseops.celery import app  # noqa: E402

call_command("migrate", verbosity=0)
if not GIVEN_DB.startswith("postgres"):
    call_command("flush", interactive=False, verbosity=0)  # our own throwaway database only
app.control.purge()
answers_n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
students_n = max(1, answers_n // 10)  # the quiz has 10 questions
# In a database someone named, leave what is there: a course and people of this run's own.
tag = f"{int(time.time())}"
course = Course.objects.create(code=f"bench-ag-{tag}", title="Bench", term="Spring 2026")
staff = User.objects.create_user(f"staff-{tag}@bench.example", "x")
Membership.objects.create(user=staff, course=course, role=Role.TA)
users = User.objects.bulk_create(
    [
        User(email=f"s{i:05d}-{tag}@bench.example", full_name=f"Student {i}", password="!")
        for i in range(students_n)
    ],
    batch_size=5000,
)
Membership.objects.bulk_create(
    [Membership(user=u, course=course, role=Role.STUDENT) for u in users], batch_size=5000
)
qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
r = random.Random(1)
lines = ["email,q1,q2,q3,q4,q5,q6.1,q6.2,q7.1,q7.2,q8,q9,q10"]
for u in users:
    lines.append(
        ",".join(
            [
                u.email,
                *(r.choice("abcd") for _ in range(5)),
                r.choice(["40", "45", "80"]),
                r.choice(["100", "50"]),
                r.choice(["195", "190", "abc"]),
                r.choice(["0.6", "600"]),
                *(r.choice("abcd") for _ in range(3)),
            ]
        )
    )
data = ("\n".join(lines) + "\n").encode()

env = {
    **os.environ,
    "DATABASE_URL": BENCH_DB,
    "REDIS_URL": BENCH_REDIS,
    "DJANGO_SETTINGS_MODULE": "courseops.settings.dev",
}
workers = [start_worker(env, f"bench{i}") for i in range(2)]
try:
    deadline = time.monotonic() + 60
    while len(app.control.ping(timeout=0.5) or []) < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
    t0 = time.perf_counter()
    report = answers_import(actor=staff, question_set=qs, data=data, commit=True)
    t1 = time.perf_counter()
    run = run_create(actor=staff, question_set=qs)
    while GradingRun.objects.get(pk=run.pk).status != "done" and time.perf_counter() - t0 < 600:
        time.sleep(0.05)  # fine enough not to add to what is measured
    t2 = time.perf_counter()
    grades = Grade.objects.filter(grading_pass__run=run).count()
    print(f"database: {BENCH_DB.rsplit('@', 1)[-1]}")
    print(
        f"intake:  {report.answers:>9,} answer rows ({report.students:,} students; the two-part "
        f"items give 2 rows) parsed and stored in {t1 - t0:.1f} s"
    )
    print(
        f"grading: {grades:>9,} grades (one per student and question) in {t2 - t1:.1f} s on 2 "
        f"workers; {t2 - t0:.1f} s from CSV to grades (target: "
        f"{'5' if grades <= 100_000 else '60'} s)"
    )

    # The floor: what PostgreSQL itself takes for the same bytes and rows — COPY of the same CSV
    # into a table, then one INSERT … SELECT of as many grade rows — in the same run. Ordinary
    # (logged) tables, each statement committed, as the grades are: a TEMP table skips the WAL.
    floor = db_floor(data, lines[0].split(","), grades)
    print(
        f"floor:   COPY of the same {len(data) / 1e6:.1f} MB CSV + INSERT … SELECT of {grades:,} "
        f"grade rows: {floor:.2f} s"
    )
    record(
        "autograder",
        f"CSV to grades, {report.answers:,} answers",
        t2 - t0,
        "s",
        floor=floor,
        target=5,
    )
    # Where the rest goes: the same answer and grade rows copied by PostgreSQL alone (no Python,
    # no network) into tables with our tables' indexes and foreign keys, each committed, as
    # the intake and the chunks commit theirs. The gap between the two floors is the schema's.
    from django.db import connection, transaction

    with connection.cursor() as cur:
        for table in ("autograder_answer", "autograder_grade"):
            cur.execute(f"DROP TABLE IF EXISTS floor_{table}")
            cur.execute(f"CREATE TABLE floor_{table} (LIKE {table} INCLUDING ALL)")
            cur.execute(  # the same foreign keys, deferred to the commit as Django's are
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' "
                "AND conrelid = %s::regclass",
                [table],
            )
            for (definition,) in cur.fetchall():
                cur.execute(f"ALTER TABLE floor_{table} ADD {definition}")
        f0 = time.perf_counter()
        with transaction.atomic():
            cur.execute(
                "INSERT INTO floor_autograder_answer SELECT a.* FROM autograder_answer a "
                "JOIN autograder_question q ON q.id = a.question_id WHERE q.question_set_id = %s",
                [qs.pk],
            )
        with transaction.atomic():
            cur.execute(
                "INSERT INTO floor_autograder_grade SELECT * FROM autograder_grade "
                "WHERE grading_pass_id = %s",
                [GradingRun.objects.get(pk=run.pk).current_pass_id],
            )
        schema_floor = time.perf_counter() - f0
        cur.execute("DROP TABLE floor_autograder_answer, floor_autograder_grade")
    print(
        f"the same {report.answers:,} answer and {grades:,} grade rows, copied by PostgreSQL "
        f"alone into tables with our indexes and foreign keys: {schema_floor:.2f} s"
    )
    record(
        "autograder",
        "CSV to grades, vs our tables' floor",
        t2 - t0,
        "s",
        floor=schema_floor,
    )

    # What the one way left to the 5× target could reach at best: the same answers and grades
    # stored one row per student (answers per set, grades per pass, the values as arrays), with
    # the same kinds of keys (a foreign key to the set or pass and to the student, one row per
    # pair, an index on the student). The rows are gathered beforehand, untimed; what is timed
    # is PostgreSQL alone writing them, each committed, as for the floor above.
    from apps.autograder.models import GradingPass, QuestionSet

    keys = {
        "qset": QuestionSet._meta.db_table,
        "gpass": GradingPass._meta.db_table,
        "user": User._meta.db_table,
    }
    deferred = "DEFERRABLE INITIALLY DEFERRED"
    with connection.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS floor_sheet, floor_grade_sheet")
        cur.execute(
            "CREATE TEMP TABLE sheet_rows AS SELECT q.question_set_id, a.student_id, "
            "array_agg(a.raw ORDER BY q.position, a.part) AS raw, "
            "array_agg(a.value ORDER BY q.position, a.part) AS value, "
            "array_agg(a.status ORDER BY q.position, a.part) AS status, "
            "min(a.source) AS source, max(a.submitted_at) AS submitted_at "
            "FROM autograder_answer a JOIN autograder_question q ON q.id = a.question_id "
            "WHERE q.question_set_id = %s GROUP BY 1, 2",
            [qs.pk],
        )
        cur.execute(
            "CREATE TEMP TABLE grade_sheet_rows AS SELECT g.grading_pass_id, g.student_id, "
            "array_agg(g.question_id ORDER BY g.question_id) AS question, "
            "array_agg(g.score ORDER BY g.question_id) AS score, "
            "array_agg(g.max_points ORDER BY g.question_id) AS max_points, "
            "jsonb_agg(g.detail ORDER BY g.question_id) AS detail "
            "FROM autograder_grade g WHERE g.grading_pass_id = %s GROUP BY 1, 2",
            [GradingRun.objects.get(pk=run.pk).current_pass_id],
        )
        cur.execute(
            f"CREATE TABLE floor_sheet (id bigserial PRIMARY KEY, "
            f"question_set_id bigint NOT NULL REFERENCES {keys['qset']} {deferred}, "
            f"student_id bigint NOT NULL REFERENCES {keys['user']} {deferred}, "
            "raw varchar(500)[], value double precision[], status varchar(12)[], "
            "source varchar(20), submitted_at timestamptz, UNIQUE (question_set_id, student_id))"
        )
        cur.execute(
            f"CREATE TABLE floor_grade_sheet (id bigserial PRIMARY KEY, "
            f"grading_pass_id bigint NOT NULL REFERENCES {keys['gpass']} {deferred}, "
            f"student_id bigint NOT NULL REFERENCES {keys['user']} {deferred}, "
            "question bigint[], score double precision[], max_points double precision[], "
            "detail jsonb, UNIQUE (grading_pass_id, student_id))"
        )
        cur.execute("CREATE INDEX ON floor_sheet (student_id)")
        cur.execute("CREATE INDEX ON floor_grade_sheet (student_id)")
        f0 = time.perf_counter()
        with transaction.atomic():
            cur.execute(
                "INSERT INTO floor_sheet (question_set_id, student_id, raw, value, status, "
                "source, submitted_at) SELECT * FROM sheet_rows"
            )
        with transaction.atomic():
            cur.execute(
                "INSERT INTO floor_grade_sheet (grading_pass_id, student_id, question, score, "
                "max_points, detail) SELECT * FROM grade_sheet_rows"
            )
        layout_floor = time.perf_counter() - f0
        cur.execute("DROP TABLE floor_sheet, floor_grade_sheet, sheet_rows, grade_sheet_rows")
    print(
        f"the same answers and grades as {report.students:,} + {report.students:,} rows, one per "
        f"student, copied by PostgreSQL alone into tables with keys of the same kinds: "
        f"{layout_floor:.2f} s"
    )
    record(
        "autograder",
        "one row per student, PostgreSQL alone (the best a re-layout could do)",
        layout_floor,
        "s",
        floor=floor,
        target=5,
    )

    # Re-grade with an unchanged key: a new pass; done only when every one of its chunks is.
    from apps.autograder.passes import progress, release
    from apps.core.errors import Conflict

    t3 = time.perf_counter()
    run = run_create(actor=staff, question_set=qs)
    samples, refused = [], 0
    while time.perf_counter() - t3 < 600:
        p = progress(GradingRun.objects.get(pk=run.pk))
        samples.append(
            f"{100 * p['chunks_done'] // max(1, p['chunks_total'])}%{'' if p['status'] != 'done' else ' done'}"
        )
        if p["status"] == "done":
            break
        try:
            release(actor=staff, question_set=qs)
        except Conflict:
            refused += 1
        time.sleep(0.25)
    t4 = time.perf_counter()
    shown = " → ".join(dict.fromkeys(samples))
    print(
        f"re-grade, unchanged key, pass {p['pass']}: {shown} in {t4 - t3:.1f} s; release refused "
        f"{refused} times while it ran, readers kept pass {p['pass'] - 1} until the end"
    )
finally:
    for w in workers:
        w.terminate()
    for w in workers:
        w.wait(20)
