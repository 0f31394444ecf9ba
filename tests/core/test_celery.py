"""Celery: eager only in the embedded default; a real worker on Redis in the full stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from apps.core.tasks import health_check
from tests.conftest import ROOT


def settings_seen_with(env: dict[str, str]) -> dict:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({k: getattr(s, k) for k in ('CELERY_TASK_ALWAYS_EAGER', "
        "'CELERY_BROKER_URL', 'CELERY_TASK_ACKS_LATE', 'CELERY_TASK_REJECT_ON_WORKER_LOST', "
        "'CELERY_WORKER_PREFETCH_MULTIPLIER', 'CELERY_BROKER_TRANSPORT_OPTIONS', "
        "'CELERY_TASK_TIME_LIMIT')}))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "courseops.settings.dev", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_without_redis_tasks_run_in_process() -> None:
    seen = settings_seen_with({})
    assert seen["CELERY_TASK_ALWAYS_EAGER"] is True
    assert seen["CELERY_BROKER_URL"] == "memory://localhost/"


def test_with_redis_tasks_survive_a_dying_worker() -> None:
    seen = settings_seen_with({"REDIS_URL": "redis://127.0.0.1:6379/3"})
    assert seen["CELERY_TASK_ALWAYS_EAGER"] is False
    assert seen["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/3"
    assert seen["CELERY_TASK_ACKS_LATE"] is True
    assert seen["CELERY_TASK_REJECT_ON_WORKER_LOST"] is True
    assert seen["CELERY_WORKER_PREFETCH_MULTIPLIER"] == 1
    assert (
        seen["CELERY_BROKER_TRANSPORT_OPTIONS"]["visibility_timeout"]
        > seen["CELERY_TASK_TIME_LIMIT"]
    )


@pytest.mark.django_db
def test_eager_opt_in_runs_the_task_here(celery_eager) -> None:  # type: ignore[no-untyped-def]
    result = health_check.delay("here").get()
    assert result["token"] == "here"
    assert result["ok"] is True
    assert result["pid"] == os.getpid()


@pytest.mark.postgres
@pytest.mark.redis
def test_a_real_worker_runs_the_health_task(celery_worker_process) -> None:  # type: ignore[no-untyped-def]
    worker = celery_worker_process()
    result = health_check.delay("ping-42").get(timeout=60)
    assert result["token"] == "ping-42"
    assert result["ok"] is True
    assert result["db"] == "postgresql"
    assert result["pid"] not in {os.getpid(), worker.pid}  # a pool process of the worker
