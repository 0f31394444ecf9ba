"""Real threads racing on the database, for the PostgreSQL concurrency tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection


def run_at_once(fns: list[Callable[[], Any]]) -> list[Any]:
    """Call every function in its own thread and connection, released together by a barrier once
    all are connected; each result is the return value or the exception raised."""
    barrier = threading.Barrier(len(fns))
    results: list[Any] = [None] * len(fns)

    def worker(i: int) -> None:
        try:
            connection.ensure_connection()  # connect first, so the barrier releases real racers
            barrier.wait()
            results[i] = fns[i]()
        except Exception as exc:
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results
