"""Shared by the bench scripts."""

from __future__ import annotations

import datetime as dt
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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
