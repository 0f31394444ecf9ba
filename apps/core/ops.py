"""Knowing when it is broken: `/healthz` (the process answers), `/readyz` (what it needs answers:
PostgreSQL, Redis, the broker, a worker and beat seen lately) as JSON for a load balancer, and
`/metrics` in Prometheus's format (django-prometheus: requests by route and status, latencies,
database and cache calls; plus courseops' jobs by kind and status, queue depth and how long the
last grading passes took).

`/metrics` answers a `Bearer $METRICS_TOKEN`, whatever the address, and without a token a client
whose address is in `METRICS_ALLOW_FROM` (or on loopback where `METRICS_TRUST_LOOPBACK` is on, as
in development). The address is the client's as the trusted proxies forwarded it
(apps.core.addresses, `AXES_PROXY_COUNT`), never the socket's: behind a reverse proxy on the same
host every outside request arrives from 127.0.0.1. Off (404) with neither a token nor an allowed
address.
`/readyz` tells anyone ready or not; which dependency failed, and its error text, only a caller
with that token or a staff session. The numbers are not a course's data, but they are nobody
else's business either.
"""

from __future__ import annotations

import datetime as dt
import hmac
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from apps.core.addresses import address_in, client_address
from apps.core.jobs import jobs
from apps.core.models import Heartbeat

LOOPBACK = {"127.0.0.1", "::1"}


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answering (no dependency is asked)."""
    return JsonResponse({"status": "ok"})


def _timed(check: Callable[[], str]) -> dict[str, Any]:
    started = time.monotonic()
    try:
        detail, ok = check(), True
    except Exception as exc:  # a readiness probe reports, it never raises
        detail, ok = f"{type(exc).__name__}: {exc}"[:200], False
    return {"ok": ok, "detail": detail, "ms": round((time.monotonic() - started) * 1000, 1)}


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return connection.vendor


def _redis() -> str:
    inner = getattr(cache, "_cache", None)
    if inner is None or not hasattr(inner, "get_client"):
        return "not used (local memory cache)"
    inner.get_client(write=True).ping()
    return "pong"


def _broker() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "not used (tasks run in the web process)"
    from celery import current_app

    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=1)
    return "connected"


def _sweep_seen() -> str:
    """The beat-queued sweep ran on a worker lately: both beat and a worker are alive."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "not used (tasks run in the web process)"
    beat = Heartbeat.objects.filter(name="sweep").first()
    most = dt.timedelta(seconds=2 * float(settings.CELERY_BEAT_SCHEDULE["sweep-jobs"]["schedule"]))  # type: ignore[arg-type]
    if beat is None:
        raise RuntimeError("no worker has run beat's sweep yet (start `make worker`)")
    age = timezone.now() - beat.at
    if age > most:
        raise RuntimeError(f"beat's sweep last ran {int(age.total_seconds())} s ago")
    return f"last sweep {int(age.total_seconds())} s ago"


def _has_token(request: HttpRequest) -> bool:
    """The request carries `Authorization: Bearer $METRICS_TOKEN` (and a token is set)."""
    token = getattr(settings, "METRICS_TOKEN", "")
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(token) and hmac.compare_digest(given, token)


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers, else 503 with each check's detail."""
    checks = {
        "database": _timed(_database),
        "redis": _timed(_redis),
        "broker": _timed(_broker),
        "worker_and_beat": _timed(_sweep_seen),
    }
    ready = all(c["ok"] for c in checks.values())
    user = getattr(request, "user", None)
    detailed = _has_token(request) or bool(user is not None and user.is_staff)
    body: dict[str, Any] = {"ready": ready, "checks": checks} if detailed else {"ready": ready}
    response = JsonResponse(body, status=200 if ready else 503)
    if not ready:
        response["Retry-After"] = "10"
    return response


class JobsCollector:
    """courseops' own figures, read at scrape time: jobs by kind and status, the broker's queue
    depth, and the duration of the last grading passes."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        by = GaugeMetricFamily(
            "courseops_jobs", "Unfinished or recently failed jobs", labels=["kind", "status"]
        )
        counts: dict[tuple[str, str], int] = {}
        for j in jobs():
            counts[(j.kind, j.status)] = counts.get((j.kind, j.status), 0) + 1
        for (kind, status), n in sorted(counts.items()):
            by.add_metric([kind, status], n)
        yield by
        depth = GaugeMetricFamily("courseops_queue_depth", "Messages waiting in the broker")
        try:
            inner = getattr(cache, "_cache", None)
            if inner is not None and hasattr(inner, "get_client"):
                from redis import Redis

                r = Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=0.5)
                depth.add_metric([], float(r.llen("celery")))
        except Exception:  # noqa: S110 - no figure rather than a failed scrape
            pass
        yield depth
        from apps.core.jobs import durations

        took = GaugeMetricFamily(
            "courseops_job_seconds", "Duration of recently finished jobs", labels=["kind"]
        )
        for kind, seconds in durations():
            took.add_metric([kind], seconds)
        yield took


_registered = False


def register_collector() -> None:
    global _registered
    if _registered:
        return
    from prometheus_client import REGISTRY

    REGISTRY.register(JobsCollector())
    _registered = True


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = getattr(settings, "METRICS_TOKEN", "")
    # The client's address as the proxies in front saw it (apps.core.addresses), never the
    # proxy's own: behind nginx every socket address is 127.0.0.1.
    client = client_address(request)
    trust_loopback = getattr(settings, "METRICS_TRUST_LOOPBACK", False)
    allowed = (trust_loopback and client in LOOPBACK) or address_in(
        client, getattr(settings, "METRICS_ALLOW_FROM", [])
    )
    if not token and not allowed:
        raise Http404("Metrics are off: set METRICS_TOKEN to turn them on.")
    if not allowed and not _has_token(request):
        response = JsonResponse(
            {"detail": "Metrics need Authorization: Bearer METRICS_TOKEN.", "code": "unauthorized"},
            status=401,
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    from django_prometheus.exports import ExportToDjangoView

    register_collector()
    return ExportToDjangoView(request)
