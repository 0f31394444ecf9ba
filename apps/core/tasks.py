"""Thin Celery tasks. The health task proves a worker can reach the broker and the database."""

from __future__ import annotations

import os
import socket

from celery import shared_task
from django.db import connection


@shared_task(name="core.health_check")
def health_check(token: str = "") -> dict[str, object]:
    """Echo `token` with the worker's host, process and the database vendor it reached."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        (one,) = cursor.fetchone() or (0,)
    return {
        "token": token,
        "worker": socket.gethostname(),
        "pid": os.getpid(),
        "db": connection.vendor,
        "ok": one == 1,
    }
