"""Redis is a cache, never the only copy: with the cache's Redis stopped (a real `redis-server`
the test starts, stops and starts again), pages and the API keep answering from PostgreSQL,
log-ins hold (sessions are written through to the database), slack days can be spent with the
ledger intact, and an entry dropped during the outage (a log-out) is not served afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
from django.core.cache import cache, caches
from django.test import Client
from django.utils import timezone

from apps.calendar.models import Assignment
from apps.core.invariants import run_checks
from apps.core.models import User
from apps.slackdays.models import LedgerEntry

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


class RedisServer:
    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(10)

    def freeze(self) -> None:
        """Down but keeping its data (a hung server): every call times out."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


@pytest.fixture
def own_redis(settings) -> Iterator[RedisServer]:  # type: ignore[no-untyped-def]
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer()
    server.start()
    settings.CACHES = {"default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": server.url}}
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    settings.COURSE_CACHE_SECONDS = 600
    yield server
    if server.proc and server.proc.poll() is None:
        server.thaw()
        server.proc.kill()
        server.proc.wait(10)
    for c in caches.all(initialized_only=True):
        c.close()


def _pages(code: str) -> list[str]:
    return [
        f"/c/{code}/",
        f"/c/{code}/slack/",
        f"/c/{code}/calendar/",
        f"/api/v1/courses/{code}/slack/me/",
        f"/api/v1/courses/{code}/calendar/",
    ]


def test_pages_answer_and_slack_is_spent_while_redis_is_stopped(ee290_demo, own_redis) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    last = Assignment.objects.filter(course=course).order_by("-due_at")[0]
    Assignment.objects.filter(pk=last.pk).update(due_at=timezone.now() + timezone.timedelta(days=3))
    client = Client(raise_request_exception=False)
    client.force_login(student)
    for url in _pages(course.code):
        assert client.get(url).status_code == 200, url
    ledger = LedgerEntry.objects.filter(account__student=student).count()
    own_redis.stop()
    started = time.monotonic()
    for url in _pages(course.code):
        assert client.get(url).status_code == 200, url  # the session comes from PostgreSQL
    response = client.post(f"/c/{course.code}/slack/apply/", {"assignment": last.pk}, follow=True)
    assert response.status_code == 200
    assert LedgerEntry.objects.filter(account__student=student).count() == ledger + 1
    assert time.monotonic() - started < 15  # slower at worst, never hanging
    own_redis.start()
    for url in _pages(course.code):
        assert client.get(url).status_code == 200, url
    assert run_checks(course.pk) == []


def test_a_log_out_while_redis_hangs_is_not_undone_when_it_returns(ee290_demo, own_redis) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    client = Client(raise_request_exception=False)
    client.force_login(User.objects.get(email="student01@example.edu"))
    assert client.get(f"/c/{course.code}/").status_code == 200  # the session is in Redis now
    stolen = client.cookies["sessionid"].value
    own_redis.freeze()
    try:
        assert client.post("/accounts/logout/").status_code in (200, 302)
    finally:
        own_redis.thaw()
    time.sleep(5.5)  # the backend's circuit closes again
    assert cache.get("anything") is None  # the first call pays the deletes it owed
    thief = Client()
    thief.cookies["sessionid"] = stolen
    response = thief.get(f"/c/{course.code}/")
    assert response.status_code == 302  # to the log-in page: the old session is gone


def test_readyz_turns_unready_when_redis_stops_and_ready_when_it_returns(
    own_redis, settings
) -> None:  # type: ignore[no-untyped-def]
    from apps.core.models import Heartbeat

    Heartbeat.objects.create(name="sweep", at=timezone.now())
    settings.METRICS_TOKEN = "ops-token"
    client = Client(HTTP_AUTHORIZATION="Bearer ops-token")  # the details need the token
    assert client.get("/readyz").json()["ready"] is True
    own_redis.stop()
    started = time.monotonic()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"]["ok"] is False
    assert response["Retry-After"]
    assert time.monotonic() - started < 5
    assert client.get("/healthz").status_code == 200  # the process itself is fine
    own_redis.start()
    assert client.get("/readyz").status_code == 200
