"""Deadline-hour load on a 2,000-student course, the way it would be served: gunicorn with the
production settings on PostgreSQL and Redis, driven from another process by wrk (bench/load/mix.lua)
for every ratio, and by locust (headless) only for the open-loop scenario.

1. Builds the course in a throwaway PostgreSQL database (`courseops_bench_load`): the EE 290
   course file, 2,000 students in 400 groups (tests/bigcourse.py), an assignment due next week.
2. Starts gunicorn (LOAD_WORKERS, default cores + 1) on 127.0.0.1.
3. Read spike: wrk, 2 threads, 50 connections, no think time, for LOAD_SECONDS (default 30) per run:
   requests/s, p50/p99, after warm-up requests that reach every worker. Two floors in the same run,
   interleaved with the mix for LOAD_ROUNDS rounds (default 3; the median round is reported, with
   the per-round min/median/max of the ratio): the anonymous log-in page (the least work the
   machine can serve) and a logged-in page with no data (session, user, menu, base template). A
   shared VM's speed moves by 2× within a day: compare with the floors, never across runs.
4. Open loop: 100 requests/s offered, as Poisson arrivals (50 users each sending at random
   instants, 2/s on average, whatever the responses): p95. (Until 2026-11-24 this used locust's
   constant_throughput, which kept the 50 users in step: a burst of 50 requests every 0.5 s.)
5. Write spike: 200 groups apply a slack day at the same instant (API, token auth), against 200
   no-op POSTs at once just before, for LOAD_WRITE_ROUNDS rounds (default 3, each on a fresh
   assignment, the days cancelled after it; the median round's ratio is recorded): latencies, the
   CPU seconds of the web workers, PostgreSQL and the client meanwhile, then the ledger
   invariants (every member charged once, balances = allowance − spends ≥ 0).

LOAD_GUNICORN_ARGS adds gunicorn flags for experiments (gthread workers with 2 or 4 threads served
57–69 requests/s against 100–119 for sync workers here: the pages are CPU-bound under one GIL).
Prints figures; never passes or fails. Needs PostgreSQL on 127.0.0.1:5432 and Redis on :6379.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import port_answers  # noqa: E402
from bench.results import record  # noqa: E402

# LOAD_DB / LOAD_REDIS_URL: a database and Redis of its own when several people bench at once.
DB = os.environ.get("LOAD_DB", "courseops_bench_load")
DB_URL = f"postgres://postgres@127.0.0.1:5432/{DB}"
REDIS_URL = os.environ.get("LOAD_REDIS_URL", "redis://127.0.0.1:6379/12")
PORT = int(os.environ.get("LOAD_PORT", "8765"))
SECONDS = int(os.environ.get("LOAD_SECONDS", "30"))
# Rounds of (anonymous floor, logged-in floor, mix), interleaved; the median round is reported.
ROUNDS = int(os.environ.get("LOAD_ROUNDS", "3"))
# LOAD_PROFILE=1 (the mix) or LOAD_PROFILE="/c/{code}/ /c/{code}/slack/" (those pages): one more
# run with py-spy sampling the workers (bench/spy.py), printed as the hottest functions.
PROFILE = os.environ.get("LOAD_PROFILE", "")
# cores + 1: on the 2-core machine 3 workers served 132–137 requests/s, 4 about 110, 6 about 93
# (CPU-bound pages: more processes only add switching and cache misses).
WORKERS = int(os.environ.get("LOAD_WORKERS", str((os.cpu_count() or 1) + 1)))
BIN = Path(sys.executable).parent


if not (port_answers(5432) and port_answers(6379)):
    print("load: skipped (needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379)")
    sys.exit(0)

subprocess.run(
    ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB],
    check=False,
    capture_output=True,
)
subprocess.run(
    ["createdb", "-h", "127.0.0.1", "-U", "postgres", DB], check=True, capture_output=True
)
SECRET = "load-bench-only-" + "k" * 50  # the sessions made here must verify in gunicorn
os.environ.update(
    DATABASE_URL=DB_URL, DJANGO_SETTINGS_MODULE="courseops.settings.dev", SECRET_KEY=SECRET
)

import datetime as dt  # noqa: E402

import django  # noqa: E402

django.setup()

from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, Sum  # noqa: E402
from django.utils import timezone  # noqa: E402

from apps.calendar.models import Assignment  # noqa: E402
from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.core.tokens import token_create  # noqa: E402
from apps.groups.models import Group  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from apps.slackdays.models import LedgerEntry, SlackAccount  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

call_command("migrate", verbosity=0)
t0 = time.perf_counter()
course = course_load(
    cf=parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
).course
people = build_big_course(course, 2000)
soon = timezone.now() + dt.timedelta(days=7)
load_assignment = Assignment.objects.create(
    course=course,
    code="LOAD",
    title="Load test",
    release_at=timezone.now(),
    due_at=soon,
    accepts_slack=True,
)
students = list(
    course.memberships.filter(role="student").select_related("user").order_by("user_id")
)
sessions = []
for m in students[:200]:
    s = SessionStore()
    s["_auth_user_id"] = str(m.user_id)
    s["_auth_user_backend"] = "apps.core.backends.ModelBackend"
    s["_auth_user_hash"] = m.user.get_session_auth_hash()
    s.create()
    sessions.append(s.session_key)
groups = list(Group.objects.filter(course=course).order_by("pk")[:200])
tokens = [
    token_create(user=g.memberships.filter(left_at__isnull=True).first().user, name="locust")[1]
    for g in groups
]
print(
    f"built 2,000 students in 400 groups, 200 sessions and tokens in "
    f"{time.perf_counter() - t0:.1f} s"
)
# A database in service has table statistics and no minute-old bulk load waiting to be written
# out: ANALYZE and CHECKPOINT, so neither autovacuum nor a checkpoint lands inside a measurement.
with connection.cursor() as cursor:
    cursor.execute("ANALYZE")
    cursor.execute("CHECKPOINT")


def _cpu(server_pid: int) -> dict[str, float]:
    """CPU seconds so far of the web workers, PostgreSQL and this client (all on the same cores:
    a slow spike with a busy client is the machine's, not the app's)."""
    import psutil

    def used(procs: list[psutil.Process]) -> float:
        total = 0.0
        for p in procs:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
        return total

    pg = [p for p in psutil.process_iter(["name"]) if p.info["name"] == "postgres"]
    return {
        "web workers": used(psutil.Process(server_pid).children()),
        "PostgreSQL": used(pg),
        "this client": used([psutil.Process()]),
    }


work = Path(tempfile.mkdtemp())
(work / "sessions.json").write_text(json.dumps(sessions))
env = {
    **os.environ,
    "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
    "DATABASE_URL": DB_URL,
    "REDIS_URL": REDIS_URL,
    "SECRET_KEY": SECRET,
    "ALLOWED_HOSTS": "127.0.0.1",
    "SITE_URL": f"http://127.0.0.1:{PORT}",
    "SECURE_SSL_REDIRECT": "false",
    "LOG_LEVEL": "ERROR",
}
subprocess.run(
    [str(BIN / "python"), "manage.py", "collectstatic", "--no-input", "-v", "0"],
    cwd=ROOT,
    env=env,
    check=True,
)
server = subprocess.Popen(
    [
        str(BIN / "gunicorn"),
        "courseops.wsgi",
        "--bind",
        f"127.0.0.1:{PORT}",
        "--workers",
        str(WORKERS),
        "--log-level",
        "warning",
        "--access-logfile",
        "-" if os.environ.get("LOAD_ACCESS_LOG") else "/dev/null",
        *os.environ.get("LOAD_GUNICORN_ARGS", "").split(),
    ],
    cwd=ROOT,
    env=env,
    stderr=open(work / "gunicorn.log", "w"),  # noqa: SIM115
)
try:
    deadline = time.monotonic() + 30
    while not port_answers(PORT) and time.monotonic() < deadline:
        time.sleep(0.2)
    print(
        f"gunicorn: {WORKERS} workers on {os.cpu_count()} cores, production settings, PostgreSQL + "
        "Redis"
    )

    def run_locust(label: str, users: int, extra_env: dict[str, str]) -> dict[str, str]:
        prefix = work / label.replace(" ", "_")
        subprocess.run(
            [
                str(BIN / "locust"),
                "-f",
                str(ROOT / "bench" / "load" / "locustfile.py"),
                "--headless",
                "-u",
                str(users),
                "-r",
                str(users),
                "-t",
                f"{SECONDS}s",
                "--host",
                f"http://127.0.0.1:{PORT}",
                "--csv",
                str(prefix),
                "--only-summary",
                "--loglevel",
                "ERROR",
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "LOAD_SESSIONS": str(work / "sessions.json"),
                "LOAD_COURSE": course.code,
                **extra_env,
            },
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(f"{prefix}_stats.csv", encoding="utf-8") as f:
            rows = {r["Name"]: r for r in csv.DictReader(f)}
        for name, r in rows.items():
            if name == "Aggregated":
                continue
            print(
                f"   {name:<16} {float(r['Requests/s']):>7.1f} req/s  p50 {r['50%']:>4} ms  p95 "
                f"{r['95%']:>4} ms  failures {r['Failure Count']}"
            )
        a = rows["Aggregated"]
        print(
            f"{label}: {float(a['Requests/s']):.1f} requests/s, p50 {a['50%']} ms, p95 {a['95%']} "
            f"ms, p99 {a['99%']} ms, {a['Request Count']} requests, {a['Failure Count']} errors"
        )
        return a

    def run_wrk(label: str, sessions_file: Path, extra_env: dict[str, str]) -> dict[str, float]:
        """One wrk run (2 threads, 50 connections, SECONDS long) of bench/load/mix.lua: requests/s,
        p50 and p99 in ms, and how many answers were not 200 (which void the figure)."""
        out = subprocess.run(
            [
                "wrk",
                "-t2",
                "-c50",
                f"-d{SECONDS}s",
                "--timeout",
                "10s",
                "-s",
                str(ROOT / "bench" / "load" / "mix.lua"),
                f"http://127.0.0.1:{PORT}",
            ],
            env={
                **os.environ,
                "LOAD_SESSIONS": str(sessions_file),
                "LOAD_COURSE": course.code,
                **extra_env,
            },
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        line = next(x for x in out.splitlines() if x.startswith("WRK_JSON "))
        r = json.loads(line.removeprefix("WRK_JSON "))
        r["rps"] = r["requests"] / r["seconds"]
        bad = r["not_200"] + r["socket_errors"]
        print(
            f"{label}: {r['rps']:.1f} req/s, p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms, "
            f"{r['requests']} requests" + (f", {bad} NOT 200 (figure void)" if bad else "")
        )
        if bad:
            raise SystemExit(f"load: {label} got {bad} answers that were not 200")
        return r

    def _median_run(runs: list[dict[str, float]]) -> dict[str, float]:
        """The run with the median rate (its p99 with it, not a median of p99s from other runs)."""
        return sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]

    # Warm-up: each worker imports lazily, compiles templates and resolves URLs on its first
    # requests; a server in service is warm, so these seconds are not counted. The requests go
    # out WORKERS * 2 at a time so that every worker gets some (one at a time, one worker could
    # take them all, and the write spike, run alone, then paid the others' first requests: twice
    # the workers' CPU). The slack-apply POSTs name no assignment and are refused (404).
    from concurrent.futures import ThreadPoolExecutor

    import requests

    def warm(path: str) -> None:
        url = f"http://127.0.0.1:{PORT}{path}"
        if path.endswith("/apply/"):
            requests.post(
                url,
                json={"assignment": 0},
                headers={"Authorization": f"Token {tokens[0]}"},
                timeout=60,
            )
        else:
            requests.get(url, cookies={"sessionid": sessions[0]}, timeout=60)

    paths = (
        f"/c/{course.code}/",
        f"/c/{course.code}/slack/",
        f"/c/{course.code}/node/",
        f"/api/v1/courses/{course.code}/slack/me/",
        f"/c/{course.code}/questions/",
        f"/api/v1/courses/{course.code}/slack/apply/",
    )
    with ThreadPoolExecutor(WORKERS * 2) as pool:
        list(pool.map(warm, paths * 4 * WORKERS))

    parts = set(os.environ.get("LOAD_PARTS", "read,open,write").split(","))
    if "read" in parts:
        # wrk, not locust, for every ratio: a Python generator on the same two cores takes CPU
        # from the server and caps how fast any page can be driven, pulling each ratio toward 1.
        # Two floors, each measured in the same run and interleaved with the mix (ROUNDS times,
        # so a neighbour's burst on a shared machine lands on both): the anonymous log-in page
        # (what the machine serves with the least work) and a logged-in page with no data
        # (session, user, navigation, base template: what every student page also pays).
        sessions_file = work / "sessions.txt"
        sessions_file.write_text("\n".join(sessions) + "\n")
        logged_in_floor = "/accounts/password/change/done/"
        rounds: dict[str, list[dict[str, float]]] = {}
        for _ in range(ROUNDS):
            for label, extra in (
                (
                    "floor: anonymous log-in page",
                    {"LOAD_PATHS": "/accounts/login/", "LOAD_ANONYMOUS": "1"},
                ),
                ("floor: logged-in page, no data", {"LOAD_PATHS": logged_in_floor}),
                ("read spike: student mix", {}),
            ):
                rounds.setdefault(label, []).append(run_wrk(label, sessions_file, extra))
        if PROFILE:
            # One more run of the mix (or of the pages LOAD_PROFILE names) with py-spy sampling
            # the workers from outside: where the milliseconds go under load, not in one process.
            from bench import spy

            raw = work / "pyspy.txt"
            sampler = spy.record(server.pid, SECONDS, raw)
            extra = {} if PROFILE == "1" else {"LOAD_PATHS": PROFILE}
            run_wrk(
                f"profiled: {PROFILE if PROFILE != '1' else 'student mix'}", sessions_file, extra
            )
            sampler.wait(60)
            print(spy.summary(raw, str(ROOT)))
        spike = _median_run(rounds["read spike: student mix"])
        anon = _median_run(rounds["floor: anonymous log-in page"])
        logged = _median_run(rounds["floor: logged-in page, no data"])
        share = [
            m["rps"] / a["rps"]
            for m, a in zip(
                rounds["read spike: student mix"],
                rounds["floor: anonymous log-in page"],
                strict=True,
            )
        ]
        print(
            f"read spike: {spike['rps']:.1f} req/s = {spike['rps'] / anon['rps']:.3f} of the "
            f"anonymous floor (aim ≥ 0.35, then 0.5; per round min/median/max "
            f"{min(share):.3f}/{statistics.median(share):.3f}/{max(share):.3f}), "
            f"{spike['rps'] / logged['rps']:.3f} of the logged-in floor; p99 {spike['p99_ms']:.0f} ms "
            f"= {spike['p99_ms'] / anon['p99_ms']:.1f}× the anonymous floor's p99 (aim ≤ 4)"
        )
        record(
            "load",
            "read spike, student mix (wrk)",
            spike["rps"],
            "req/s",
            floor=anon["rps"],
            target=round(1 / 0.35, 2),
            higher_is_better=True,
        )
        record(
            "load",
            "read spike vs logged-in floor (wrk)",
            spike["rps"],
            "req/s",
            floor=logged["rps"],
            higher_is_better=True,
        )
        record(
            "load", "read spike p99 (wrk)", spike["p99_ms"], "ms", floor=anon["p99_ms"], target=4
        )
    if "open" in parts:
        run_locust("open loop, 100 requests/s offered", 50, {"LOAD_OPEN_LOOP_RPS_PER_USER": "2"})
    if "write" not in parts:
        sys.exit(0)

    # Write spike: 200 groups at the same instant.
    def at_once(assignment: int) -> tuple[list[float], list[int]]:
        """Every token POSTs a slack spend of `assignment` at the same instant."""
        barrier = threading.Barrier(len(tokens))
        latencies: list[float] = []
        codes: list[int] = []
        lock = threading.Lock()

        def spend(token: str) -> None:
            barrier.wait()
            t = time.perf_counter()
            r = requests.post(
                f"http://127.0.0.1:{PORT}/api/v1/courses/{course.code}/slack/apply/",
                json={"assignment": assignment},
                headers={"Authorization": f"Token {token}"},
                timeout=60,
            )
            with lock:
                latencies.append(time.perf_counter() - t)
                codes.append(r.status_code)

        threads = [threading.Thread(target=spend, args=(tok,)) for tok in tokens]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        latencies.sort()
        return latencies, codes

    # WRITE_ROUNDS rounds of (floor, spike), interleaved like the read spike's, each on a fresh
    # assignment: a single 200-request burst on two shared cores moved by ±15 % between runs, as
    # much as the change it was meant to judge. The floor: the same 200 authenticated POSTs at
    # once, refused after one SELECT (no such assignment): token, session, routing and the
    # response, nothing of the spend. After each round every group cancels its day (the
    # students' own path), so each round starts from full balances.
    from apps.slackdays import services as slack_services

    at_once(0)  # every token's first use (warm-up reached one token only): not the floor's
    write_rounds = []
    for n in range(int(os.environ.get("LOAD_WRITE_ROUNDS", "3"))):
        target = Assignment.objects.create(
            course=course,
            code=f"LOADW{n + 1}",
            title=f"Write spike {n + 1}",
            release_at=timezone.now(),
            due_at=soon,
            accepts_slack=True,
        )
        before_floor = _cpu(server.pid)
        floor_lat, floor_codes = at_once(0)
        floor_cpu = _cpu(server.pid)["web workers"] - before_floor["web workers"]
        before = _cpu(server.pid)
        latencies, codes = at_once(target.pk)
        spent = {k: v - before.get(k, 0.0) for k, v in _cpu(server.pid).items()}
        floor_p95 = floor_lat[int(0.95 * len(floor_lat)) - 1]
        p95 = latencies[int(0.95 * len(latencies)) - 1]
        charged = LedgerEntry.objects.filter(
            account__course=course, assignment=target, kind="spend"
        )
        twice = charged.values("account__student").annotate(n=Count("id")).filter(n__gt=1).count()
        expected = sum(g.memberships.filter(left_at__isnull=True).count() for g in groups)
        print(
            f"write round {n + 1}: floor ({sorted(set(floor_codes))}) p50 "
            f"{statistics.median(floor_lat):.2f} s, p95 {floor_p95:.2f} s; spike "
            f"{codes.count(201)} × 201, other statuses {sorted(set(codes) - {201})}, p50 "
            f"{statistics.median(latencies):.2f} s, p95 {p95:.2f} s, last {latencies[-1]:.2f} s: "
            f"{p95 / floor_p95:.2f}× the floor; {charged.count()} spend entries for {expected} "
            f"members, {twice} charged twice; CPU s (the floor's web workers {floor_cpu:.2f}) "
            + ", ".join(f"{k} {v:.2f}" for k, v in spent.items())
        )
        write_rounds.append({"p95": p95, "floor": floor_p95, "ok": codes.count(201)})
        for g in groups:
            member = g.memberships.filter(left_at__isnull=True).first().user
            slack_services.slack_cancel(actor=member, course=course, assignment_id=target.pk)
    ratios = sorted(r["p95"] / r["floor"] for r in write_rounds)
    median = sorted(write_rounds, key=lambda r: r["p95"] / r["floor"])[len(write_rounds) // 2]
    record(
        "load", "write spike p95, 200 at once", median["p95"], "s", floor=median["floor"], target=2
    )
    print(
        f"write spike: p95 / floor p95 per round min/median/max {ratios[0]:.2f}/"
        f"{ratios[len(ratios) // 2]:.2f}/{ratios[-1]:.2f} (target ≤ 2); "
        f"{sum(r['ok'] for r in write_rounds)} of {200 * len(write_rounds)} spends succeeded"
    )
    bad_balance = sum(
        1
        for a in SlackAccount.objects.filter(course=course)
        if a.balance
        != a.allowance + (LedgerEntry.objects.filter(account=a).aggregate(s=Sum("delta"))["s"] or 0)
        or a.balance < 0
    )
    print(f"ledger: accounts whose balance ≠ allowance + Σ deltas or < 0: {bad_balance}")
finally:
    server.terminate()
    server.wait(20)
