"""The course's invariants, written down once: each app registers named checks in `ready()`;
`manage.py check_course <code>` (and the staff status page, and the stateful test) runs them
all. A check takes a course id and returns one sentence per violation, naming the objects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Check = Callable[[int], list[str]]
_CHECKS: dict[str, Check] = {}


@dataclass(frozen=True)
class Violation:
    check: str
    detail: str


def register_check(name: str, check: Check) -> None:
    """Register an invariant under a sentence that says what must hold."""
    _CHECKS.setdefault(name, check)


def checks() -> dict[str, Check]:
    return dict(_CHECKS)


def run_checks(course_id: int) -> list[Violation]:
    """Every violation of every registered invariant for one course, check by check."""
    return [
        Violation(name, detail) for name, check in _CHECKS.items() for detail in check(course_id)
    ]
