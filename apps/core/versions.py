"""Version stamps for cached reads: a cache entry's key names the version of what it was built
from, and a write that changes that data drops the version, so every entry built from the old
data stops being read at once (and expires on its own).

A version is a random token kept in the shared cache under `ver:<name>`. Dropping it is a cache
delete, done when the change is made and again when its transaction commits (a reader between
the two cannot keep the old data under the new token), and, when Redis does not answer, owed
and done first when it answers again (`apps.core.cache`). A missing version is never restarted
from a number an old entry could still carry: the next reader makes a new random token. With
`COURSE_CACHE_SECONDS = 0` (the tests, unless a test turns it on) or Redis down, `version_of`
returns None and callers read through to the database.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Model
from django.db.models.signals import post_delete, post_save

T = TypeVar("T")


def version_key(name: str) -> str:
    """The cache key holding the token of `name`."""
    return f"ver:{name}"


_key = version_key


_generation = [0]  # bumped by every drop in this process: a memo of older tokens is not used


def version_of(name: str, memo: Any = None) -> str | None:
    """The current token of `name`, made when there is none; None when caching is off or the
    cache does not answer (then nothing may be cached under it). With `memo` (an object of
    one request, such as its course), read once per request unless this process drops a
    version meanwhile."""
    if settings.COURSE_CACHE_SECONDS <= 0:
        return None
    seen: dict[str, tuple[int, str]] | None = None
    if memo is not None:
        seen = memo.__dict__.setdefault("_versions", {})
        hit = seen.get(name)
        if hit is not None and hit[0] == _generation[0]:
            return hit[1]
    token: str | None = cache.get(_key(name))
    if token is None:
        made = secrets.token_hex(6)
        # (another process may make it first; the cache down: None)
        token = made if cache.add(_key(name), made, None) else cache.get(_key(name))
    if seen is not None and token is not None:
        seen[name] = (_generation[0], token)
    return token


def versions_of(names: list[str]) -> list[str] | None:
    """The current tokens of several names read in one round trip (those missing made as
    `version_of` makes them); None when caching is off or the cache does not answer."""
    if settings.COURSE_CACHE_SECONDS <= 0:
        return None
    found: dict[str, str] = cache.get_many([_key(n) for n in names])
    tokens = []
    for name in names:
        token = found.get(_key(name)) or version_of(name)
        if token is None:
            return None
        tokens.append(token)
    return tokens


def version_drop(name: str) -> None:
    """The data behind `name` changed: entries built from it are not read again."""
    _generation[0] += 1
    cache.delete(_key(name))
    transaction.on_commit(lambda: cache.delete(_key(name)))


def _in_transaction() -> bool:
    """Inside an atomic block of the code (not a test case's own): what it reads may be its
    own uncommitted writes, which a rollback would take back without dropping any version."""
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def cached(name: str, part: str, build: Callable[[], T], memo: Any = None) -> T:
    """`build()`, kept in the cache under the current version of `name` for
    `COURSE_CACHE_SECONDS`; built afresh when there is no version (see above) and not stored
    when read inside a transaction. `part` tells entries under one version apart (a group, a
    person): it must name whose data it is whenever the data is one person's or one group's.
    `memo`: see `version_of`."""
    token = version_of(name, memo)
    if token is None or _in_transaction():
        return build()
    key = f"v:{name}:{token}:{part}"
    hit = cache.get(key)
    if hit is not None:
        return hit[0]
    value = build()
    cache.set(key, (value,), settings.COURSE_CACHE_SECONDS)
    return value


def course_version(course_id: int) -> str:
    """The version of a course's slow-changing rows the Today page reads for everyone alike
    (the calendar, lab windows, question sets): dropped by each app that writes them."""
    return f"course:{course_id}"


def course_changed(course_id: int) -> None:
    version_drop(course_version(course_id))


def drop_version_on_write(model: type[Model], name_of: Callable[[Any], str | None]) -> None:
    """Every save and delete of the model's rows drops the version `name_of(row)` names (None:
    nothing to drop); connected once per model and name."""

    def dropped(sender: Any, instance: Any, **kwargs: Any) -> None:
        name = name_of(instance)
        if name is not None:
            version_drop(name)

    uid = f"version-{model._meta.label}-{name_of.__qualname__}"
    post_save.connect(dropped, sender=model, dispatch_uid=uid, weak=False)
    post_delete.connect(dropped, sender=model, dispatch_uid=f"{uid}-del", weak=False)


def drop_course_version_on_write(
    model: type[Model], course_of: Callable[[Any], int | None] | None = None
) -> None:
    """Every save and delete of the model's rows drops their course's version; `course_of`
    finds the course of a row without a `course_id` of its own (None: nothing to drop)."""

    def name_of(instance: Any) -> str | None:
        course_id = course_of(instance) if course_of else instance.course_id
        return course_version(course_id) if course_id is not None else None

    drop_version_on_write(model, name_of)
