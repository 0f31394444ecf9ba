"""Background jobs, seen from above: every app that runs work on a worker registers

- a *sweeper* — `sweep(now) -> list[str]` — that takes over what a dead worker left: work whose
  lease ran out is queued again (a task that may run twice is harmless: every task here is
  idempotent), and work that has been taken over too often ends as failed with the reason;
- a *lister* — `jobs(course_id | None) -> list[Job]` — of its queued, running, stuck and failed
  jobs, for the staff status page and `/readyz`.

Core's beat task `core.sweep_jobs` runs every sweeper once a minute (`JOB_SWEEP_EVERY_S`), so a
job whose worker was killed is picked up within its lease plus a minute, not after the broker's
two-hour visibility timeout.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

Sweeper = Callable[[dt.datetime], list[str]]


@dataclass(frozen=True)
class Job:
    kind: str  # "grading pass", "answers upload", "scribing solve" …
    label: str
    status: str  # queued | running | stuck | failed
    since: dt.datetime
    detail: str = ""
    url: str = ""


Lister = Callable[[int | None], list[Job]]

Durations = Callable[[], list[tuple[str, float]]]  # (kind, seconds) of recently finished jobs

_SWEEPERS: dict[str, Sweeper] = {}
_LISTERS: dict[str, Lister] = {}
_DURATIONS: dict[str, Durations] = {}


def register_sweeper(name: str, sweep: Sweeper) -> None:
    _SWEEPERS[name] = sweep


def register_jobs(name: str, lister: Lister, took: Durations | None = None) -> None:
    _LISTERS[name] = lister
    if took is not None:
        _DURATIONS[name] = took


def durations() -> list[tuple[str, float]]:
    """How long recently finished jobs took, for `/metrics`."""
    return [row for took in _DURATIONS.values() for row in took()]


def sweep_all(now: dt.datetime) -> list[str]:
    """Run every sweeper; what each took over or failed, one line each."""
    return [f"{name}: {line}" for name, sweep in _SWEEPERS.items() for line in sweep(now)]


def jobs(course_id: int | None = None) -> list[Job]:
    """Every registered app's unfinished or failed jobs, oldest first."""
    found = [job for lister in _LISTERS.values() for job in lister(course_id)]
    return sorted(found, key=lambda j: j.since)
