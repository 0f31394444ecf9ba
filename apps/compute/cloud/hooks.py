"""Where `usage` (the floor above) has its say in what the cloud does, without the cloud
importing it: registered from `ComputeConfig.ready()`."""

from __future__ import annotations

from collections.abc import Callable

from apps.core.models import Course

StartGuard = Callable[[Course, int | None], str | None]

_start_guards: list[StartGuard] = []


def register_start_guard(guard: StartGuard) -> None:
    """`guard(course, group_id)` returns why a group may not start its node now, or None."""
    if guard not in _start_guards:
        _start_guards.append(guard)


def start_refusal(course: Course, group_id: int | None) -> str | None:
    """The first guard's refusal of a group's start (staff are never asked)."""
    for guard in _start_guards:
        refusal = guard(course, group_id)
        if refusal:
            return refusal
    return None
