"""Queue Celery work after the transaction commits, and say so plainly when the queue is down.

A task queued inside a transaction could run before the rows it reads are committed, so work is
queued with `transaction.on_commit`. The broker may be restarting at that moment: Celery retries
the publish for several seconds (`CELERY_TASK_PUBLISH_RETRY_POLICY`); if it still fails:

- `critical=True` (the request exists to start this work, e.g. a grading run): `on_failure` runs
  (it records the failure in its own transaction, so nothing is left looking queued) and the
  caller gets `Unavailable` (503, "nothing was started; try again").
- `critical=False` (a notification about something already saved): the failure is logged and the
  request succeeds; the saved thing is complete and visible where staff look for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

from apps.core.errors import Unavailable

log = logging.getLogger(__name__)


def broker_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the broker did not answer"."""
    from kombu.exceptions import OperationalError as KombuOperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return (
        KombuOperationalError,
        RedisConnectionError,
        RedisTimeoutError,
        ConnectionError,
        OSError,
    )


def enqueue_on_commit(
    send: Callable[[], Any],
    *,
    what: str,
    critical: bool,
    on_failure: Callable[[BaseException], None] | None = None,
) -> None:
    """Run `send` (e.g. `lambda: task.delay(pk)`) once the current transaction commits."""

    def run() -> None:
        try:
            send()
        except broker_errors() as exc:
            log.error("could not queue %s: %s: %s", what, type(exc).__name__, exc)
            if on_failure is not None:
                on_failure(exc)
            if critical:
                raise Unavailable(
                    f"The task queue did not answer, so {what} was not started. "
                    "Nothing else changed; try again in a minute."
                ) from exc

    transaction.on_commit(run)


def task_named(name: str) -> Any:
    """The Celery task registered as `name` (e.g. "scribing.solve").

    Services queue their app's tasks by name because tasks import services, never the reverse:
    an import circle would otherwise join the two. Each app imports its `tasks` module in
    `AppConfig.ready()`, so the name is registered in the web process as in a worker, and the
    task's `delay` honours eager mode like a direct call would.
    """
    from celery import current_app

    return current_app.tasks[name]
