"""Hot reads whose SQL Django builds once per process.

Django turns every queryset into SQL anew: for the one-row reads every student page makes (the
membership with its course, the student's group, their slack account) that costs 0.3–1 ms of CPU
each, several times what PostgreSQL spends running them. `compiled_query(key, build, *args)`
builds the queryset once with placeholder values of the same types, keeps Django's compiler (its
SQL, select list, related-object map and converters) and from then on only swaps the parameter
values: the rows come back through Django's own iterable (model instances, select_related
objects, `values_list` tuples) exactly as the queryset would give them.

Rules for `build`: it uses only its arguments (no captured variables, no `timezone.now()`
inside: those would be built into the SQL once; a closure is refused), the same shape for every
call under one `key` (put anything that changes the SQL text, such as an optional filter, into
the key) and every argument reaching the SQL as one parameter, unchanged: `field=value` and
`field__in`-free lookups on integer, text and datetime
columns. A placeholder that is transformed, inlined or repeated is refused when the query is first
built (ImproperlyConfigured), so a wrong use fails in the tests, not with wrong rows.
"""

from __future__ import annotations

import copy
import datetime as dt
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from django.db.models import QuerySet

T = TypeVar("T")

_BASE_INT = -7_300_000_000_000  # far from any id, count or hour a query is given
_BASE_TIME = dt.datetime(1111, 1, 1, tzinfo=dt.UTC)
_INT64 = (-(2**63), 2**63 - 1)


def _placeholder(value: Any, i: int) -> Any:
    if isinstance(value, bool):
        raise ImproperlyConfigured("compiled_query: a bool changes the SQL; put it in the key")
    if isinstance(value, int):
        return _BASE_INT - i
    if isinstance(value, str):
        return f"\x1fcompiled-placeholder-{i}\x1f"
    if isinstance(value, dt.datetime):
        return _BASE_TIME + dt.timedelta(seconds=i)
    raise ImproperlyConfigured(f"compiled_query: no placeholder for {type(value).__name__}")


@dataclass(frozen=True)
class _Compiled:
    queryset: QuerySet[Any]
    compiler: Any
    sql: str
    params: tuple[Any, ...]
    slots: tuple[int, ...]  # where each argument goes in `params`
    adapted: tuple[bool, ...]  # the backend turns this datetime into its own form (SQLite: text)
    kinds: tuple[type, ...]  # the arguments' types (None or another type is another shape)
    # Each connection's converters for the select list (Django works them out per execution:
    # a tenth of a small page's query time); weak keys, so a finished thread's connection goes.
    converters: weakref.WeakKeyDictionary[Any, Any]


class _QueryView:
    """The template query, except that `get_compiler` hands out the prepared compiler."""

    def __init__(self, query: Any, compiler: Any) -> None:
        self._query = query
        self._compiler = compiler

    def get_compiler(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._query, name)


class _Bound:
    """What Django's iterables read of a queryset, bound to one call's compiler."""

    def __init__(self, qs: QuerySet[Any], compiler: Any) -> None:
        self.db = qs.db
        self.model = qs.model
        self.query = _QueryView(qs.query, compiler)
        self._known_related_objects: dict[Any, Any] = {}
        self._fields = qs._fields  # type: ignore[attr-defined]


_cache: dict[str, _Compiled] = {}
_lock = threading.Lock()


def _compile(key: str, build: Callable[..., QuerySet[Any]], args: tuple[Any, ...]) -> _Compiled:
    if getattr(build, "__closure__", None):  # a captured value would be built into the SQL
        raise ImproperlyConfigured(f"compiled_query {key!r}: build must use only its arguments")
    holders = [_placeholder(a, i) for i, a in enumerate(args)]
    qs = build(*holders)
    if qs._prefetch_related_lookups or qs._known_related_objects:  # type: ignore[attr-defined]
        raise ImproperlyConfigured(f"compiled_query {key!r}: no prefetch or related managers")
    compiler = qs.query.get_compiler(using=qs.db)
    sql, params = compiler.as_sql()
    ops = connections[qs.db].ops
    slots, adapted = [], []
    for i, h in enumerate(holders):
        found = [j for j, p in enumerate(params) if type(p) is type(h) and p == h]
        adapt = not found and isinstance(h, dt.datetime)
        if adapt:  # SQLite sends datetimes as text; PostgreSQL as they are
            a = ops.adapt_datetimefield_value(h)
            found = [j for j, p in enumerate(params) if type(p) is type(a) and p == a]
        if len(found) != 1:
            raise ImproperlyConfigured(
                f"compiled_query {key!r}: argument {i} reaches the SQL {len(found)} times as a "
                "parameter (it must reach it once, unchanged)"
            )
        slots.append(found[0])
        adapted.append(adapt)
    kinds = tuple(map(type, args))
    return _Compiled(
        qs,
        compiler,
        sql,
        tuple(params),
        tuple(slots),
        tuple(adapted),
        kinds,
        weakref.WeakKeyDictionary(),
    )


def compiled_query(key: str, build: Callable[..., QuerySet[Any, T]], *args: Any) -> list[T]:
    """`list(build(*args))`, with the SQL built once per process and database for `key`."""
    entry = _cache.get(key)
    if entry is None:
        entry = _compile(key, build, args)
        with _lock:  # two threads may both build it; one is kept, both are right
            entry = _cache.setdefault(key, entry)
    if tuple(map(type, args)) != entry.kinds:
        raise TypeError(f"compiled_query {key!r}: arguments of types {entry.kinds}, not {args!r}")
    if any(type(a) is int and not _INT64[0] <= a <= _INT64[1] for a in args):
        return list(build(*args))  # Django's own answer (no rows for `=`), not a database error
    params = list(entry.params)
    connection = connections[entry.queryset.db]  # this thread's connection
    for slot, adapt, value in zip(entry.slots, entry.adapted, args, strict=True):
        params[slot] = connection.ops.adapt_datetimefield_value(value) if adapt else value
    compiler = copy.copy(entry.compiler)
    compiler.connection = connection
    compiler.as_sql = lambda *a, **k: (entry.sql, params)
    converters = entry.converters.get(connection)
    if converters is None:
        fields = [s[0] for s in compiler.select[0 : compiler.col_count]]
        converters = entry.converters[connection] = compiler.get_converters(fields)
    compiler.get_converters = lambda _expressions: converters
    iterable: Any = entry.queryset._iterable_class
    return list(iterable(_Bound(entry.queryset, compiler)))
