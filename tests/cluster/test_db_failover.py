"""PostgreSQL fails over under a write spike and no write the app acknowledged is lost.

Two PostgreSQL 15 clusters of the test's own (initdb in a temporary directory, never the
machine's server): a primary and a streaming replica with synchronous replication
(synchronous_standby_names, synchronous_commit=on), as a managed HA PostgreSQL keeps one. The app
as production runs it (gunicorn from deploy/systemd/courseops-web.service with the production
settings, a Celery worker from its unit) is given both hosts libpq's way:
`postgres://…@127.0.0.1:P1,127.0.0.1:P2/courseops?target_session_attrs=read-write`.

Client threads write through the API, each logging every write answered 2xx with what it
created: students spend a slack day on F1 for their group and cancel it, again and again (the
ledger's spend and cancel entries), and the TA adjusts balances (an adjustment entry, named by its
reason). Mid-spike the replica is promoted (`pg_ctl promote`) and the old primary stopped in
immediate mode, as a host dies. Then:

- every answer during the switch is 2xx, 503 or an expected 4xx (a spend already made, nothing
  to cancel), never a 500, and writes are acknowledged again within seconds;
- every acknowledged write is in the new primary (the client-side log against its tables);
- the worker that graded a pass on the old primary grades another on the new one, every grade
  once; `check_course` (ledger balances among its checks) finds 0 violations.

The figures go to the output and to test-artifacts/db-failover.json."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
import requests
from django.conf import settings

from tests.cluster.seed import failover as failover_seed
from tests.conftest import _database_url
from tests.edge import unit_command
from tests.peers.run import free_port, stop

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),  # the test database, migrated, is copied in
    pytest.mark.timeout(600),
]
ROOT = Path(__file__).resolve().parents[2]
PGBIN = Path("/usr/lib/postgresql/15/bin")
STUDENTS = 50  # ten groups of five
QUESTIONS = 10  # the MLSys·im quiz's graded parts
SPENDERS = 4  # groups whose student spends and cancels, one thread each
ADJUSTERS = 2  # threads of TA adjustments, on the other groups' students
BEFORE_S = 4.0  # the spike runs at least this long before the failover…
BEFORE_ACKS = 3  # …and until every thread has this many acknowledged writes (a gunicorn worker's
# first request imports the views: seconds on a busy 2-core machine, and a thread can wait on it)
AFTER_ACKS = 5  # …and after it, until every thread has this many acknowledged writes again
RESUME_LIMIT_S = 30
# A spend already made or nothing to cancel (the last answer was a 503, or the other order).
EXPECTED_4XX = {400, 409}


def pg(*args: str, timeout: float = 120) -> str:
    """A PostgreSQL server program, run as the postgres user (the server refuses root)."""
    r = subprocess.run(
        ["runuser", "-u", "postgres", "--", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert r.returncode == 0, f"{' '.join(args)}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r.stdout


def query(port: int, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(
        host="127.0.0.1", port=port, user="postgres", dbname="courseops", autocommit=True
    ) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]
        return list(cur.fetchall()) if cur.description else []


def wait(cond, timeout: float, step: float = 0.25) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return False


# A ledger entry as the API answered it: its account's student and number, and what it did.
Entry = tuple[str, int, str, int, int, str]
ENTRIES = (
    "SELECT u.email, e.seq, e.kind, e.delta, e.balance_after, e.reason "
    "FROM slackdays_ledgerentry e JOIN slackdays_slackaccount a ON a.id = e.account_id "
    "JOIN core_user u ON u.id = a.student_id"
)


def entry(e: dict[str, object]) -> Entry:
    return (
        str(e["student"]),
        int(e["seq"]),
        str(e["kind"]),
        int(e["delta"]),  # type: ignore[call-overload]
        int(e["balance_after"]),
        str(e["reason"]),
    )  # type: ignore[call-overload]


@dataclass(eq=False)  # a thread: hashed by identity
class Writer(threading.Thread):
    """One client: `step(n)` makes one write and returns (status, key, ids created). Every answer
    is kept with its time; every 2xx with what it created."""

    name_: str
    base: str
    token: str
    answers: list[tuple[float, float, int]] = field(default_factory=list)  # sent, answered, status
    acked: list[tuple[str, list[Entry]]] = field(default_factory=list)  # key, ledger entries
    stopping: threading.Event = field(default_factory=threading.Event)
    refused: dict[str, str] = field(default_factory=dict)  # a 4xx's detail, one per kind

    def __post_init__(self) -> None:
        threading.Thread.__init__(self, name=self.name_, daemon=True)
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Token {self.token}"

    def post(self, path: str, body: dict[str, object]) -> tuple[int, object]:
        sent = time.monotonic()
        try:
            r = self.http.post(self.base + path, json=body, timeout=60)
            status, data = r.status_code, (r.json() if r.content else None)
        except (requests.RequestException, ValueError):
            status, data = 0, None  # no answer at all, or not JSON: never expected
        self.answers.append((sent, time.monotonic(), status))
        if 400 <= status < 500 and isinstance(data, dict):
            self.refused.setdefault(f"{status} {path.rsplit('/', 2)[-2]}", str(data)[:200])
        return status, data

    def step(self, n: int) -> None:
        raise NotImplementedError

    def run(self) -> None:
        n = 0
        while not self.stopping.is_set():
            self.step(n)
            n += 1
            time.sleep(0.02)


@dataclass(eq=False)  # a thread: hashed by identity
class Spender(Writer):
    """A student spends a slack day on F1 for the group, then cancels it; again and again."""

    course: str = ""
    assignment: int = 0

    def step(self, n: int) -> None:
        action = "apply" if n % 2 == 0 else "cancel"
        path = f"/api/v1/courses/{self.course}/slack/{action}/"
        status, data = self.post(path, {"assignment": self.assignment})
        if 200 <= status < 300:
            assert isinstance(data, list)
            self.acked.append((f"{self.name_} {action} {n}", [entry(e) for e in data]))


@dataclass(eq=False)  # a thread: hashed by identity
class Adjuster(Writer):
    """The TA adjusts a student's balance by -1, then +1, with a reason that names the write."""

    course: str = ""
    students: list[int] = field(default_factory=list)

    def step(self, n: int) -> None:
        reason = f"failover {self.name_} {n}"
        body = {
            "student": self.students[(n // 2) % len(self.students)],
            "delta": -1 if n % 2 == 0 else 1,
            "reason": reason,
        }
        status, data = self.post(f"/api/v1/courses/{self.course}/slack/adjust/", body)
        if 200 <= status < 300:
            assert isinstance(data, dict)
            self.acked.append((reason, [entry(data)]))


class Clusters:
    """The primary and its synchronous replica, in a temporary directory of their own."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="courseops-failover-"))
        owner = pwd.getpwnam("postgres")
        os.chown(self.dir, owner.pw_uid, owner.pw_gid)
        self.primary, self.replica = free_port(), free_port()
        self.url = (
            f"postgres://postgres@127.0.0.1:{self.primary},127.0.0.1:{self.replica}/courseops"
            "?target_session_attrs=read-write&connect_timeout=5"
        )

    def data(self, name: str) -> str:
        return str(self.dir / name)

    def start(self, name: str, port: int) -> None:
        pg(
            f"{PGBIN}/pg_ctl",
            "-D",
            self.data(name),
            "-l",
            str(self.dir / f"{name}.log"),
            "-w",
            "-o",
            f"-p {port}",
            "start",
        )

    def up_primary(self) -> None:
        pg(f"{PGBIN}/initdb", "-N", "-D", self.data("primary"), "-U", "postgres", "--auth=trust")
        with open(self.dir / "primary" / "postgresql.conf", "a") as conf:
            conf.write(
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.dir}'\n"
                "wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n"
                "synchronous_commit = on\nmax_connections = 60\n"
            )
        self.start("primary", self.primary)
        query_db = ["psql", "-h", "127.0.0.1", "-p", str(self.primary), "-U", "postgres", "-q"]
        subprocess.run([*query_db, "-c", "CREATE DATABASE courseops"], check=True, timeout=60)
        # The test database, migrated: copied in a few seconds, where migrating takes minutes.
        dump = subprocess.run(
            [f"{PGBIN}/pg_dump", "-Fc", "--no-owner", _database_url()],
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        subprocess.run(
            [
                f"{PGBIN}/pg_restore",
                "--no-owner",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.primary),
                "-U",
                "postgres",
                "-d",
                "courseops",
            ],
            input=dump,
            check=True,
            timeout=120,
        )

    def up_replica(self) -> None:
        """A base backup of the primary, streaming from it, then the primary made to wait for
        it at every commit. Set on the primary only (ALTER SYSTEM after the backup): once
        promoted, the replica runs alone, as a managed database does until a new standby joins."""
        pg(
            f"{PGBIN}/pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.primary),
            "-U",
            "postgres",
            "-D",
            self.data("replica"),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        with open(self.dir / "replica" / "postgresql.auto.conf", "a") as conf:
            conf.write(
                f"primary_conninfo = 'host=127.0.0.1 port={self.primary} user=postgres "
                "application_name=replica1'\n"
            )
        self.start("replica", self.replica)
        query(self.primary, "ALTER SYSTEM SET synchronous_standby_names = 'replica1'")
        query(self.primary, "SELECT pg_reload_conf()")
        assert wait(
            lambda: (
                query(self.primary, "SELECT sync_state FROM pg_stat_replication") == [("sync",)]
            ),
            60,
        ), query(
            self.primary, "SELECT application_name, state, sync_state FROM pg_stat_replication"
        )

    def down(self) -> None:
        for name in ("primary", "replica"):
            if (self.dir / name / "postmaster.pid").exists():
                subprocess.run(
                    [
                        "runuser",
                        "-u",
                        "postgres",
                        "--",
                        f"{PGBIN}/pg_ctl",
                        "-D",
                        self.data(name),
                        "-m",
                        "immediate",
                        "stop",
                    ],
                    capture_output=True,
                    timeout=60,
                    check=False,
                )
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def clusters() -> Iterator[Clusters]:
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("the test's PostgreSQL runs as the postgres user: root starts it (CI does)")
    c = Clusters()
    try:
        yield c
    finally:
        c.down()


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def grading_pass(base: str, course: str, key: str, token: str, port: int) -> float:
    """A grading pass of the quiz queued through the API (retried while it answers 503) and
    graded by the worker: every student's every part graded once in it. The first call makes
    the run, the second re-grades it (a new pass of the same run). Returns its seconds."""
    [(before,)] = query(port, "SELECT coalesce(max(id), 0) FROM autograder_gradingpass")
    started = time.monotonic()
    auth = {"Authorization": f"Token {token}"}
    url = f"{base}/api/v1/courses/{course}/question-sets/{key}/runs/"
    answer = requests.post(url, headers=auth, timeout=60)
    while answer.status_code == 503 and time.monotonic() - started < 30:
        time.sleep(1)
        answer = requests.post(url, headers=auth, timeout=60)
    assert answer.status_code == 202, answer.text[:500]
    new = (
        "SELECT p.id, p.status, count(g.id), count(DISTINCT (g.student_id, g.question_id)) "
        "FROM autograder_gradingpass p LEFT JOIN autograder_grade g ON g.grading_pass_id = p.id "
        "WHERE p.id > %s GROUP BY p.id, p.status"
    )
    assert wait(lambda: [r[1] for r in query(port, new, before)] == ["done"], 120), query(
        port, new, before
    )
    [(_, _, total, distinct)] = query(port, new, before)
    assert total == distinct == STUDENTS * QUESTIONS, (total, distinct)
    return time.monotonic() - started


def test_a_failover_under_writes_loses_no_acknowledged_write(clusters: Clusters) -> None:
    report: dict[str, object] = {}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    web_port = free_port()
    base = f"http://127.0.0.1:{web_port}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
        "DATABASE_URL": clusters.url,
        "REDIS_URL": settings.CELERY_BROKER_URL,  # this pytest process's own Redis database
        "SECRET_KEY": "db-failover-" + "s" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",  # gunicorn reached directly, over plain HTTP
        "SITE_URL": base,
        "LOG_LEVEL": "WARNING",
    }
    for name in ("PYTEST_XDIST_WORKER", "EMAIL_HOST"):
        env.pop(name, None)
    from courseops.celery import app

    app.control.purge()
    try:
        started = time.monotonic()
        # The course is made here, in the test database, and copied in with it.
        seed = failover_seed(STUDENTS)
        clusters.up_primary()
        report["primary_up_s"] = round(time.monotonic() - started, 1)
        # The app boots (minutes on a busy machine) while the replica is made.
        logs = clusters.dir
        procs["web"] = start(
            [*unit_command("courseops-web.service", bind_port=web_port), "--log-level", "warning"],
            env,
            logs / "web.log",
        )
        procs["worker"] = start(
            [*unit_command("courseops-worker.service"), "--concurrency=1", "--loglevel=WARNING"],
            env,
            logs / "worker.log",
        )

        clusters.up_replica()
        report["setup_s"] = round(time.monotonic() - started, 1)

        def up() -> bool:
            try:
                return requests.get(base + "/healthz", timeout=5).status_code == 200
            except requests.RequestException:
                return False

        assert wait(up, 240), (logs / "web.log").read_text()[-3000:]
        report["app_up_s"] = round(time.monotonic() - started, 1)
        course, key, ta = seed["course"], seed["set"], seed["token"]
        # The worker grades a pass on the primary: its connection is the old primary's.
        report["pass_before_s"] = round(grading_pass(base, course, key, ta, clusters.primary), 1)

        groups = seed["groups"]
        writers: list[Writer] = [
            Spender(f"spender{i}", base, g["token"], course=course, assignment=seed["assignment"])
            for i, g in enumerate(groups[:SPENDERS])
        ]
        others = [i for g in groups[SPENDERS:] for i in g["ids"]]
        writers += [
            Adjuster(f"adjuster{i}", base, ta, course=course, students=others[i::ADJUSTERS])
            for i in range(ADJUSTERS)
        ]
        spike_started = time.monotonic()
        for w in writers:
            w.start()
        time.sleep(BEFORE_S)
        wait(lambda: all(len(w.acked) >= BEFORE_ACKS for w in writers), 60)
        before = {w.name_: len(w.acked) for w in writers}
        assert all(before.values()), (
            f"writes not acknowledged before the failover: {before}",
            Counter(s for w in writers for _, _, s in w.answers),
        )

        # The failover: the replica promoted, then the old primary gone as a dead host goes.
        failover_at = time.monotonic()
        pg(f"{PGBIN}/pg_ctl", "-D", clusters.data("replica"), "-w", "promote")
        promoted_s = time.monotonic() - failover_at
        pg(f"{PGBIN}/pg_ctl", "-D", clusters.data("primary"), "-m", "immediate", "stop")
        killed_at = time.monotonic()
        marks = {w.name_: len(w.acked) for w in writers}
        assert wait(
            lambda: all(len(w.acked) >= marks[w.name_] + AFTER_ACKS for w in writers), 90
        ), {w.name_: len(w.acked) - marks[w.name_] for w in writers}
        report["spike_s"] = round(time.monotonic() - spike_started, 1)
        for w in writers:
            w.stopping.set()
        for w in writers:
            w.join(90)

        answers = [a for w in writers for a in w.answers]
        statuses = Counter(s for _, _, s in answers)
        unavailable = sorted(t for _, t, s in answers if s == 503)
        resumed = min(
            t for w in writers for sent, t, s in w.answers if 200 <= s < 300 and sent > killed_at
        )
        acked = [(k, entries) for w in writers for k, entries in w.acked]
        # Every entry of the course's ledger in the new primary, as the API shows one.
        there = set(query(clusters.replica, ENTRIES))
        lost = [k for k, entries in acked if not set(entries) <= there]
        report["spike"] = {
            "writers": len(writers),
            "requests": len(answers),
            "statuses": dict(sorted(statuses.items())),
            "acknowledged_writes": len(acked),
            "acknowledged_ledger_entries": sum(len(e) for _, e in acked),
            "acknowledged_writes_lost": len(lost),
            "promote_s": round(promoted_s, 2),
            "first_ack_after_old_primary_stopped_s": round(resumed - killed_at, 2),
            "writes_unacknowledged_s": round(resumed - failover_at, 2),
            "503_span_s": round(unavailable[-1] - unavailable[0], 2) if unavailable else 0,
            "refused": {k: v for w in writers for k, v in w.refused.items()},
        }
        bad = {s: n for s, n in statuses.items() if s not in {200, 201, 503, *EXPECTED_4XX}}
        assert not bad, report
        assert not lost, f"acknowledged, then lost: {lost[:20]} {report}"
        assert resumed - killed_at < RESUME_LIMIT_S, report
        # The worker, whose connection died with the old primary, grades on the new one.
        report["pass_after_s"] = round(grading_pass(base, course, key, ta, clusters.replica), 1)
        checked = subprocess.run(
            [sys.executable, "manage.py", "check_course", course],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        report["check_course"] = checked.stdout.strip().splitlines()[-1:]
        assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
        report["total_s"] = round(time.monotonic() - started, 1)
    finally:
        for proc in procs.values():
            stop(proc, timeout=5)
        text = json.dumps(report, indent=1)
        sys.stderr.write(f"\ndatabase failover figures: {text}\n")
        artifacts = ROOT / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        (artifacts / "db-failover.json").write_text(text + "\n")
