"""The term walked against the app as it ships: Debian's nginx ending TLS in front of gunicorn
with the production settings on PostgreSQL, a real Celery worker and beat on Redis, e-mail to an
SMTP server on loopback — not the test client inside the test's transaction. nginx runs the site
file and gunicorn, the worker and beat the systemd units that the operator guide includes
(deploy/, read by tests/edge.py).

A student, a TA and the instructor log in through the log-in form; then every shipped question
set is graded, released, regraded and hidden and the processes' clock steps through every week of
the term (tests/termwalk.py), every page and API read answered at each step. Every form and API
write (tests/crawl.py) is crawled across the cluster's two web hosts, behind a proxy with TLS
(tests/cluster/test_cluster.py), on the same world.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from aiosmtpd.controller import Controller

from tests.conftest import _database_url
from tests.crawl import Browser, crawl_world
from tests.edge import collect_static, nginx_in_front, unit_command, wait_listening
from tests.peers.run import free_port, stop
from tests.termwalk import READERS, clock_hooks, walk_the_term

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.browser,  # the term walk's axe scans (tests.termwalk)
    pytest.mark.nginx,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(2400),
]
ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


class Inbox:
    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        self.count += len(envelope.rcpt_tos)
        return "250 OK"


@pytest.fixture
def stack(ee290_live):  # type: ignore[no-untyped-def]
    """The demo world served as production serves it, its processes following a clock the term
    walk steps (tests.termwalk); yields (base URL, world, pages of each role, inbox, logs, origin,
    clock): the base URL is nginx's https address, the origin gunicorn's own (plain HTTP on
    loopback)."""
    clock, env, web_args = clock_hooks()
    for served in serve(ee290_live, env_extra=env, web_extra=web_args):
        yield (*served, clock)


def serve(  # type: ignore[no-untyped-def]
    course, *, env_extra: dict[str, str] | None = None, web_extra: str = ""
):
    """Build the world on `course` and serve it as production does (nginx with TLS in front of
    gunicorn, worker, beat, SMTP sink); yields (https base URL, world, pages of each role, inbox,
    logs, gunicorn's own URL). `env_extra` is added to the processes' environment and `web_extra`
    to gunicorn's command line (the term crawl's clock). While it serves, REQUESTS_CA_BUNDLE
    names the test's self-signed certificate, so every requests call of the crawl verifies
    nginx's certificate."""
    world, pages, _ = crawl_world(course)

    inbox = Inbox()
    smtp_port, web_port = free_port(), free_port()
    work = Path(tempfile.mkdtemp(prefix="crawl-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": os.environ.get("CRAWL_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "SECRET_KEY": "production-crawl-" + "s" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "AXES_PROXY_COUNT": "1",  # nginx in front (docs/operators.md, "Behind nginx")
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "EMAIL_USE_TLS": "false",
        "LOG_LEVEL": "WARNING",
        "SITE_URL": "https://127.0.0.1",  # nginx's address with its port, once it listens
        **(env_extra or {}),
    }
    collect_static(env)
    redis_db = urlsplit(env["REDIS_URL"]).path.strip("/") or "0"
    subprocess.run(["redis-cli", "-n", redis_db, "flushdb"], check=False, capture_output=True)
    # The units the operator guide gives (deploy/systemd/), with the test's log level; the
    # worker on one process, as before nginx joined (the two cores are shared with the rest).
    commands = {
        "web": [
            *unit_command("courseops-web.service", bind_port=web_port),
            *f"--log-level warning {web_extra}".split(),
        ],
        "worker": [
            *unit_command("courseops-worker.service"),
            "--concurrency=1",
            "--loglevel=WARNING",
        ],
        "beat": [
            *unit_command("courseops-beat.service", schedule=work / "beat-schedule"),
            "--loglevel=WARNING",
        ],
    }
    trusted = os.environ.get("REQUESTS_CA_BUNDLE")
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        with nginx_in_front(web_port, work / "nginx") as front:
            env["SITE_URL"] = front.base
            logs = {name: open(work / f"{name}.log", "w+b") for name in commands}  # noqa: SIM115
            for name, words in commands.items():
                procs[name] = subprocess.Popen(
                    words,
                    cwd=ROOT,
                    env=env,
                    stderr=logs[name],
                    start_new_session=True,  # stopped with every process it forks (stop())
                )
            os.environ["REQUESTS_CA_BUNDLE"] = str(front.ca)
            wait_listening(web_port, procs["web"], "gunicorn", work / "web.log")
            yield front.base, world, pages, inbox, logs, f"http://127.0.0.1:{web_port}"
    finally:
        if trusted is None:
            os.environ.pop("REQUESTS_CA_BUNDLE", None)
        else:
            os.environ["REQUESTS_CA_BUNDLE"] = trusted
        for proc in procs.values():
            proc.terminate()  # all at once: each stops while the others do
        for proc in procs.values():
            stop(proc, timeout=30)
        smtp.stop()


def test_the_term_walked_against_the_production_stack(stack) -> None:  # type: ignore[no-untyped-def]
    base, world, pages, inbox, logs, origin, clock = stack
    browsers = {}
    for role in READERS:
        user = world.people[role]
        assert user is not None
        browsers[role] = Browser(base)
        browsers[role].log_in(user.email)
    # Every shipped set graded, released, regraded and hidden, every week of the calendar
    # stepped through, every page and API read at each step (tests.termwalk).
    term = _in_own_thread(walk_the_term, base, world, clock, browsers, pages, origin)
    report = (
        f"the term through nginx + TLS at {base}; e-mails delivered to the SMTP server: "
        f"{inbox.count}\n{term}"
    )
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "production-crawl.txt").write_text(report + "\n")
    sys.stdout.write("\n" + report + "\n")
    logs["web"].seek(0)
    assert b"Internal Server Error" not in logs["web"].read()  # Django's line for every 500
    logs["worker"].seek(0)
    worker_log = logs["worker"].read().decode()
    assert "NotRegistered" not in worker_log
    assert "raised unexpected" not in worker_log, worker_log[-3000:]  # a task that crashed


def _in_own_thread(fn, *args):  # type: ignore[no-untyped-def]
    """Run `fn` in a thread of its own and return its result. Playwright's sync API refuses to
    start in a thread whose asyncio loop is running, and under `--dist loadfile` this worker may
    already hold the browser tests' session-wide Playwright; a new thread has no loop. The
    thread's database connection is closed before it ends, so the test's teardown can flush."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    def run():  # type: ignore[no-untyped-def]
        try:
            return fn(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
