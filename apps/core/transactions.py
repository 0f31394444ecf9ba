"""Is the caller inside its own transaction? A guard that tests cannot satisfy by accident.

pytest-django (through Django's `TestCase`) wraps every test in an atomic block, so a bare
`connection.in_atomic_block` is always true under test and a service that writes its audit row
after its own `atomic()` closed passes the suite, then answers 500 in production. Django marks
the test case's own blocks (`Atomic._from_testcase`); only a block that is not one of those
counts here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import transaction

P = ParamSpec("P")
R = TypeVar("R")


def in_own_transaction(using: str | None = None) -> bool:
    """True when an atomic block opened by the application (not a test case) is open."""
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        return False
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def require_own_transaction(message: str, using: str | None = None) -> None:
    """Raise `RuntimeError(message)` unless the caller runs inside its own `atomic()`."""
    if not in_own_transaction(using):
        raise RuntimeError(message)


def in_callers_transaction(fn: Callable[P, R]) -> Callable[P, R]:
    """Mark a helper that writes for its caller (a lifecycle reaction, a locked-row helper): it
    refuses before writing anything unless the caller's own `atomic()` is open, so a direct call
    from outside a service fails at once instead of leaving half a change in autocommit."""

    @functools.wraps(fn)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        require_own_transaction(
            f"{fn.__module__}.{fn.__qualname__} runs inside its caller's transaction."
        )
        return fn(*args, **kwargs)

    return guarded
