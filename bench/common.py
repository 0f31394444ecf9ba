"""Shared by the bench scripts."""

from __future__ import annotations

import datetime as dt
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def fresh_database(name: str) -> str:
    """Drop and create a throwaway PostgreSQL database on 127.0.0.1; its URL."""
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", name], check=False, capture_output=True)
    subprocess.run(["createdb", *pg, name], check=False, capture_output=True)
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def port_answers(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on host:port (PostgreSQL, Redis, the server under load)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def course_pages(code: str) -> dict[str, list[tuple[str, str]]]:
    """The list pages and endpoints that grow with a course, by who fetches them (the page
    bench and the department bench measure the same ones)."""
    c, a = f"/c/{code}/", f"/api/v1/courses/{code}/"
    return {
        "ta": [
            ("staff groups board", c + "groups/"),
            ("staff slack page", c + "slack/staff/"),
            ("roster", c + "roster/"),
            ("API groups (staff)", a + "groups/"),
            ("API slack balances", a + "slack/balances/"),
            ("API exceptions (staff)", a + "slack/exceptions/"),
        ],
        "student": [
            ("student dashboard", c),
            ("student slack page", c + "slack/"),
            ("student node page", c + "node/"),
            ("API slack/me", a + "slack/me/"),
            ("API groups (student)", a + "groups/"),
        ],
    }


def start_worker(
    env: Mapping[str, str], name: str, logfile: Path | None = None
) -> subprocess.Popen[bytes]:
    """One Celery worker process (one pool process) on the bench's database and Redis; with
    `logfile`, every task's end is logged there (`worker_task_ends`)."""
    log = ["--loglevel=INFO", f"--logfile={logfile}"] if logfile else ["--loglevel=WARNING"]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "courseops",
            "worker",
            "--concurrency=1",
            *log,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            f"--hostname={name}@%h",
        ],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def worker_task_ends(logfile: Path, task: str) -> list[dt.datetime]:
    """When each run of `task` ended, from a worker's INFO log ("… Task <name>[id] succeeded")."""
    if not logfile.exists():
        return []
    stamp = re.compile(
        r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}):.*Task " + re.escape(task) + r"\["
    )
    return [
        dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
        for line in logfile.read_text(encoding="utf-8").splitlines()
        if (m := stamp.match(line)) and "succeeded" in line
    ]


BARE_PAGE = "/accounts/password/reset/"  # session, user, navigation, base template; no data


def bare_page_ms(client: Any, repeats: int = 15) -> float:
    """The floor of an in-process page: the median ms of a page with no data (`BARE_PAGE`)
    through the same client, logged in as the same person, at the same moment."""
    client.get(BARE_PAGE)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        client.get(BARE_PAGE)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def db_floor(data: bytes, columns: list[str], rows_out: int, *, repeat: int = 3) -> float:
    """The database's own floor for an intake of `data` (a CSV with a header) that writes
    `rows_out` rows: the same bytes into an ordinary table (PostgreSQL: COPY; SQLite: one
    executemany), then one INSERT … SELECT of `rows_out` rows, each committed. Seconds: the
    fastest of `repeat` tries, as a floor is the least the machine needs: one try swung from
    0.067 s to 0.149 s between runs on one machine, and the ratio with it."""
    return min(_db_floor_once(data, columns, rows_out) for _ in range(max(1, repeat)))


def _db_floor_once(data: bytes, columns: list[str], rows_out: int) -> float:
    import csv
    import io

    from django.db import connection, transaction

    cols = ", ".join(f'"c{i}" text' for i in range(len(columns)))
    with connection.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS floor_in")
        cur.execute("DROP TABLE IF EXISTS floor_out")
        cur.execute(f"CREATE TABLE floor_in ({cols})")
        cur.execute("CREATE TABLE floor_out (k text, n integer, v double precision)")
        per = max(1, -(-rows_out // max(1, data.count(b"\n") - 1)))
        t = time.perf_counter()
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with cur.cursor.copy(
                    "COPY floor_in FROM STDIN WITH (FORMAT csv, HEADER true)"
                ) as c:
                    c.write(data)
                series = "generate_series(1, %s) AS q(value)"
            else:
                rows = list(csv.reader(io.StringIO(data.decode())))[1:]
                marks = ", ".join(["%s"] * len(columns))
                cur.executemany(f"INSERT INTO floor_in VALUES ({marks})", rows)  # noqa: S608
                series = (
                    "(WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM s "
                    "WHERE value < %s) SELECT value FROM s) AS q"
                )
        with transaction.atomic():
            cur.execute(
                f"INSERT INTO floor_out SELECT f.c0, q.value, 1.0 FROM floor_in f CROSS JOIN {series} "  # noqa: S608
                "LIMIT %s",
                [per, rows_out],
            )
        floor = time.perf_counter() - t
        cur.execute("DROP TABLE floor_in")
        cur.execute("DROP TABLE floor_out")
    return floor
