"""Shared fixtures and the rules for tests that need real components.

Markers: `postgres`, `redis`, `browser`, `nginx`. Without the service a marked test is skipped with the
reason shown; with CI=true it fails instead, so CI can never pass by skipping them.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
import redis
from django.conf import settings

from tests.peers.run import stop
from tests.peers.smtp import sink  # noqa: F401  (a fixture: an SMTP server a test can stop)

ROOT = Path(__file__).resolve().parent.parent
COURSE_FILE = ROOT / "courses" / "ee290-sp26.yaml"
CHROMIUM = "/usr/bin/chromium"
NGINX = "/usr/sbin/nginx"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _redis_answers() -> bool:
    try:
        return bool(redis.Redis.from_url(settings.TEST_REDIS_URL, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and {reason}: real components are required in CI", pytrace=False)
    pytest.skip(reason)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres"):
        engine = settings.DATABASES["default"]["ENGINE"]
        if "postgresql" not in engine:
            _missing("PostgreSQL is not configured (set DATABASE_URL or start 127.0.0.1:5432)")
    if item.get_closest_marker("redis") and not _redis_answers():
        _missing(f"Redis does not answer at {settings.TEST_REDIS_URL}")
    if item.get_closest_marker("browser") and not shutil.which(CHROMIUM):
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    if item.get_closest_marker("nginx") and not shutil.which(NGINX):
        _missing(f"{NGINX} is missing (apt-get install nginx)")


# The files that take minutes, longest first (a run's --durations): they start first, so the two
# pytest workers end together instead of one running the crawl alone at the end. `make test`
# keeps this order (--no-loadscope-reorder; xdist would otherwise put files with many tests
# first, and these have one or a few). Every other file follows in its usual order.
LONGEST_FIRST = (
    "tests/test_production_crawl.py",
    "tests/cluster/test_cluster.py",
    "tests/autograder/test_workers.py",
    "tests/browser/test_accessibility.py",
    "tests/test_schema_fuzz.py",
    "tests/browser/test_accessibility_gaps.py",
    "tests/browser/test_phone.py",
    "tests/test_aria_references.py",
    "tests/test_permissions_matrix.py",
    "tests/cluster/test_beat_failover.py",
    "tests/core/test_make_run_again.py",
    "tests/core/test_first_look.py",
    "tests/test_query_budgets.py",
    "tests/test_stateful_course.py",
    "tests/cluster/test_db_failover.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).resolve().parents[1]
    stale = [path for path in LONGEST_FIRST if not (root / path).is_file()]
    assert not stale, f"tests/conftest.py LONGEST_FIRST names files that are gone: {stale}"
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


_RAN: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed:
        for marker in ("postgres", "redis", "browser"):
            if marker in report.keywords:
                _RAN[marker] += 1


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    terminalreporter.write_sep("-", "real components")
    terminalreporter.write_line(
        f"database: {engine}; passed on PostgreSQL-only: {_RAN['postgres']}, "
        f"with Redis/worker: {_RAN['redis']}, in Chromium: {_RAN['browser']}"
    )


@pytest.fixture
def redis_cache(settings):  # type: ignore[no-untyped-def]
    """The shared cache on Redis (the test one) with the per-course caches on, as production
    runs them; emptied before and after."""
    from django.core.cache import cache

    settings.CACHES = {
        "default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": settings.TEST_REDIS_URL}
    }
    settings.COURSE_CACHE_SECONDS = 300
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def celery_eager(settings):  # type: ignore[no-untyped-def]
    """Run tasks in-process for this test (the default in tests is: queue, don't run)."""
    from courseops.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False
    # An eager task marks the process "inside a task" (no result.get()) with a process-wide flag
    # that it restores on exit; two eager tasks in the live server's threads can interleave and
    # leave it set, and a later test waiting on a real worker's result then fails. Clear it.
    from celery._state import _set_task_join_will_block

    _set_task_join_will_block(False)


@pytest.fixture
def course_file_text() -> str:
    return COURSE_FILE.read_text(encoding="utf-8")


@pytest.fixture
def ee290(db, course_file_text):  # type: ignore[no-untyped-def]
    """The real EE 290 course file loaded, without people."""
    from apps.core.coursefile import parse_course_file
    from apps.setup.course_loader import course_load

    return course_load(cf=parse_course_file(course_file_text)).course


@pytest.fixture
def ee290_live(ee290):  # type: ignore[no-untyped-def]
    """The demo as `make run` shows it: the term moved so that today is in week 7."""
    from apps.setup.demo import demo_load
    from apps.setup.demo_term import demo_activity
    from apps.setup.liveterm import move_term, weeks_to_today

    move_term(ee290, weeks_to_today(ee290))
    demo_load(course=ee290)
    demo_activity(course=ee290)
    return ee290


@pytest.fixture
def ee290_demo(ee290):  # type: ignore[no-untyped-def]
    """The EE 290 course with the demo people: 1 instructor, 2 TAs, 40 students, 8 groups."""
    from apps.setup.demo import demo_load

    demo_load(course=ee290)
    return ee290


def _database_url() -> str:
    """The URL of the database the tests use right now (the test database, not the dev one)."""
    from django.db import connection

    s = connection.settings_dict
    if "postgresql" not in s["ENGINE"]:
        raise RuntimeError("a worker process needs a shared database: PostgreSQL")
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def celery_worker_process(transactional_db):  # type: ignore[no-untyped-def]
    """A real `celery worker` in its own process, on the test Redis, reading the test database.

    Yields a function that starts the worker (call it again after killing it); every worker
    started is stopped at teardown. Queued messages from earlier runs are purged first.
    """
    import subprocess
    import sys
    import time

    from courseops.celery import app

    app.control.purge()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.test",
        "DATABASE_URL": _database_url(),
    }
    procs: list[subprocess.Popen[bytes]] = []

    def start(
        concurrency: int = 1, pool: str = "prefork", beat: bool = False, **extra_env: str
    ) -> subprocess.Popen[bytes]:
        import tempfile

        beat_args = (
            ["--beat", f"--schedule={tempfile.mkdtemp(prefix='beat-')}/schedule"] if beat else []
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "courseops",
                "worker",
                "--loglevel=WARNING",
                f"--concurrency={concurrency}",
                f"--pool={pool}",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                f"--hostname=test-{len(procs)}@%h",
                *beat_args,
            ],
            cwd=ROOT,
            env={**env, **extra_env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its pool children are stopped with it (tests.peers.run.stop)
        )
        procs.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"worker exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if app.control.ping(timeout=0.5):
                return proc
        raise RuntimeError("worker did not answer a ping within 60 s")

    yield start
    for proc in procs:
        stop(proc, timeout=20)


from tests.peers.fixtures import (  # noqa: E402, F401  (fixtures for every test)
    gce_peer,
    gce_process,
    lti_platform,
    oidc_process,
    oidc_provider,
    saml_idp,
)
