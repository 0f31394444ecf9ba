"""A student's Today, kept in the shared cache between the writes that could change it.

Building a student's Today asks every app (deadlines with their slack days, milestones, duties,
bookings, reviews, quotas, labs …): most of the dashboard's time and queries, for a page that
changes only when one of those rows is written. So what it shows (the items, each panel that
names what it reads, the slack standing) is kept per student under:

- one version per label it reads (`today:slackdays`, `today:core.Course`: the `reads` of the Today
  sources and panels, or declared with `reads()`), dropped by every statement that writes one of
  the label's tables. The writes are watched on the database connection, not through model
  signals, because the busiest ones go around them: a slack spend is one `WITH … UPDATE …
  INSERT`, staff tools use `QuerySet.update`, imports `apps.core.bulk` (whose `COPY` calls
  `rows_written`). Inside a transaction a version is dropped at the first such write and again
  at commit (`version_drop`), so a reader in between cannot keep what is about to change.
- the course's own version (`course:<id>`: the calendar, lab windows, question sets);
- the minute: relative times ("due in 2 h") and what became overdue move on.

Staff lists are built every time: they are decisions waiting, a few people look at them, and
they must never lag. Caching off (`COURSE_CACHE_SECONDS = 0`, the tests), Redis down, or inside
a transaction: built every time, as before.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterable
from functools import cache as memoize
from typing import Any, TypeVar

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.db.backends.signals import connection_created
from django.db.models import Model

from apps.core.models import Course, Role
from apps.core.registry import _PANELS, _TODAY
from apps.core.versions import (
    _in_transaction,
    course_version,
    version_drop,
    version_key,
    versions_of,
)

T = TypeVar("T")
# The table each INSERT, UPDATE or DELETE of a statement writes (a CTE may hold several).
_WRITES = re.compile(r'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?', re.IGNORECASE)
_LABELS: set[str] = set()  # what the cached reads outside the Today sources name (`reads`)


def version(label: str) -> str:
    return f"today:{label}"


def reads(*labels: str) -> tuple[str, ...]:
    """Declare, at import, the app or model labels a `student_cached` read depends on, so their
    tables are watched (courseops.E007 checks they resolve); returns them."""
    _LABELS.update(labels)
    _table_versions.cache_clear()
    return labels


def declared_labels() -> set[str]:
    return set(_LABELS)


def _resolve(label: str) -> list[type[Model]]:
    """The models an app label ("slackdays") or a model label ("core.Membership") names."""
    if "." in label:
        return [apps.get_model(label)]
    return list(apps.get_app_config(label).get_models(include_auto_created=True))


@memoize
def today_labels() -> tuple[str, ...]:
    """Every label a Today source students see reads."""
    return tuple(
        sorted(
            {
                label
                for source in _TODAY
                if Role.STUDENT in source.roles
                for label in source.read_labels()
            }
        )
    )


@memoize
def _table_versions() -> dict[str, frozenset[str]]:
    """table → the versions a write to it drops (resolved once every app has registered)."""
    out: dict[str, set[str]] = {}
    panels = {label for panel in _PANELS for label in panel.read_labels()}
    for label in {*today_labels(), *panels, *_LABELS}:
        for model in _resolve(label):
            out.setdefault(model._meta.db_table, set()).add(version(label))
    return {table: frozenset(names) for table, names in out.items()}


def _changed(connection: Any, names: Iterable[str]) -> None:
    """Drop the versions, each once per transaction of the code's (at its first write here and
    again at its commit, by `version_drop`). A transaction is told apart by the list of commit
    hooks its connection starts it with (a new one after every commit and rollback) and, under a
    test case's own block, by the savepoint the code's outermost block made; not by the block
    object, which a function decorated with `transaction.atomic` reuses for every call."""
    blocks = connection.atomic_blocks
    first = next((i for i, b in enumerate(blocks) if not getattr(b, "_from_testcase", False)), None)
    if first is None:  # autocommit: every statement is its own transaction
        for name in names:
            version_drop(name)
        return
    sid = connection.savepoint_ids[first - 1] if first > 0 else None
    seen: tuple[list[Any], str | None, set[str]] | None = getattr(
        connection, "_today_dropped", None
    )
    if seen is None or seen[0] is not connection.run_on_commit or seen[1] != sid:
        seen = (connection.run_on_commit, sid, set())
        connection._today_dropped = seen
    for name in names:
        if name not in seen[2]:
            seen[2].add(name)
            version_drop(name)


def _watch(execute: Callable[..., Any], sql: Any, params: Any, many: bool, context: Any) -> Any:
    result = execute(sql, params, many, context)
    if (
        isinstance(sql, str)
        and sql.lstrip()[:6].upper() != "SELECT"
        and apps.ready
        and settings.COURSE_CACHE_SECONDS > 0
    ):
        watched = _table_versions()
        names = {n for table in _WRITES.findall(sql) for n in watched.get(table, ())}
        if names:
            _changed(context["connection"], names)
    return result


def rows_written(model: type[Model]) -> None:
    """Rows of `model` were written where no statement names them (a bulk `COPY`)."""
    from django.db import connection

    if apps.ready and settings.COURSE_CACHE_SECONDS > 0:
        _changed(connection, _table_versions().get(model._meta.db_table, ()))


def _install(sender: Any, connection: Any, **kwargs: Any) -> None:
    if _watch not in connection.execute_wrappers:
        connection.execute_wrappers.append(_watch)


def connect() -> None:
    """Watch every database connection this process opens (and any already open)."""
    from django.db import connections

    connection_created.connect(_install, dispatch_uid="today-cache-watch", weak=False)
    for connection in connections.all(initialized_only=True):
        _install(None, connection)


def student_cached(
    course: Course,
    user_id: int,
    now: dt.datetime,
    part: str,
    labels: Iterable[str],
    build: Callable[[], T],
) -> T:
    """`build()` (one student's `part`: "deadlines", "slack" …), or the copy kept since no table
    of `labels` (declared with `reads` or by a Today source or panel) was written, within the
    same minute: `student_kept` with one part."""
    return student_kept(course, user_id, now, [(part, labels, build)])[0]


def student_kept(
    course: Course,
    user_id: int,
    now: dt.datetime,
    parts: list[tuple[str, Iterable[str], Callable[[], Any]]],
) -> list[Any]:
    """Each part's `build()`, or its copy kept since none of its labels' tables was written
    (and within the minute), in one round trip to Redis when all are kept: the versions and the
    entries, each entry carrying the versions it was built under. A part missing or built under
    older versions is built again and kept, alone: a write drops only the parts that read it."""
    if settings.COURSE_CACHE_SECONDS <= 0 or _in_transaction():
        return [build() for _, _, build in parts]
    per_part = [
        [course_version(course.pk), *map(version, sorted(set(labels)))] for _, labels, _ in parts
    ]
    names = sorted({n for part_names in per_part for n in part_names})
    keys = [f"today:{course.pk}:{user_id}:{part}" for part, _, _ in parts]
    found = cache.get_many([*map(version_key, names), *keys])
    tokens: dict[str, Any] = {n: found.get(version_key(n)) for n in names}
    if None in tokens.values():
        made = versions_of(names)  # the first reader since a drop makes the new tokens
        if made is None:
            return [build() for _, _, build in parts]
        tokens = dict(zip(names, made, strict=True))
    minute = int(now.timestamp()) // 60
    out: list[Any] = []
    fresh: dict[str, Any] = {}
    for (_, _, build), part_names, key in zip(parts, per_part, keys, strict=True):
        built_from = ".".join(str(tokens[n]) for n in part_names)
        stamp = (minute, hashlib.blake2b(built_from.encode(), digest_size=12).hexdigest())
        hit = found.get(key)
        if hit is not None and hit[0] == stamp:
            out.append(hit[1])
            continue
        value = build()
        fresh[key] = (stamp, value)
        out.append(value)
    if fresh:
        cache.set_many(fresh, min(60, settings.COURSE_CACHE_SECONDS))
    return out
