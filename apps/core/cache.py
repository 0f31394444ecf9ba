"""Django's Redis cache backend, keeping one Redis client per connection pool, and failing soft.

Redis is a cache here, never the only copy: when it does not answer, a read is a miss (sessions
then come from PostgreSQL through `cached_db`, the calendar from its tables), a write is skipped,
and for a few seconds (`DOWN_FOR_S`) no call waits on it at all, so a page is slower, never a
500. A delete that could not reach Redis is remembered in the process and done first when Redis
answers again, so an entry invalidated during the outage (a logged-out session, a moved
deadline) is not served afterwards from a Redis that kept it.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every get, set and delete,
and each one builds its table of ~170 response callbacks: on a page that reads its session and
the course calendar from the cache, that cost about as much Python as the reads themselves
(`bench/profile_pages.py`). A client over a pool is safe to share, and Django already keeps one
cache object (so one of these) per thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient

log = logging.getLogger(__name__)
T = TypeVar("T")
DOWN_FOR_S = 5.0


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own private helpers (not in its type stubs): the same pool choice as upstream.
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class _Health:
    """Per process: whether Redis was seen down lately, and the deletes it still owes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.down_until = 0.0
        self.owed: set[str] = set()


_HEALTH: dict[str, _Health] = {}


def _errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError)


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = params.setdefault("OPTIONS", {})
        options.setdefault("socket_connect_timeout", 0.5)
        options.setdefault("socket_timeout", 1.0)
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        self._health = _HEALTH.setdefault(str(server), _Health())

    @property
    def is_down(self) -> bool:
        return time.monotonic() < self._health.down_until

    def _soft(self, call: Callable[[], T], default: T, owed: list[str] | None = None) -> T:
        h = self._health
        if self.is_down:
            if owed:
                with h.lock:
                    h.owed.update(owed)
            return default
        pending: list[str] = []
        try:
            if h.owed:
                with h.lock:
                    pending, h.owed = list(h.owed), set()
                self._cache.delete_many(pending)
                pending = []
            return call()
        except _errors() as exc:
            with h.lock:
                h.down_until = time.monotonic() + DOWN_FOR_S
                h.owed.update(pending + (owed or []))
            log.warning("Redis did not answer (%s: %s); reading through", type(exc).__name__, exc)
            return default

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        return self._soft(lambda: super(RedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Any, version: Any = None) -> Any:
        return self._soft(lambda: super(RedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: Any = None) -> bool:
        return self._soft(lambda: super(RedisCache, self).has_key(key, version), False)

    def set(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> None:
        self._soft(lambda: super(RedisCache, self).set(key, value, timeout, version), None)

    def add(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> bool:
        return self._soft(lambda: super(RedisCache, self).add(key, value, timeout, version), False)

    def set_many(self, data: Any, timeout: Any = None, version: Any = None) -> list[Any]:
        return self._soft(
            lambda: super(RedisCache, self).set_many(data, timeout, version), list(data)
        )

    def touch(self, key: Any, timeout: Any = None, version: Any = None) -> bool:
        return self._soft(lambda: super(RedisCache, self).touch(key, timeout, version), False)

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        def call() -> int:
            return super(RedisCache, self).incr(key, delta, version)

        if self.is_down:
            raise ValueError(f"Key '{key}' not found (Redis is down)")
        result = self._soft(call, None)
        if result is None:
            raise ValueError(f"Key '{key}' not found (Redis is down)")
        return result

    def delete(self, key: Any, version: Any = None) -> bool:
        made = self.make_and_validate_key(key, version=version)
        return self._soft(lambda: super(RedisCache, self).delete(key, version), False, [made])

    def delete_many(self, keys: Any, version: Any = None) -> None:
        made = [self.make_and_validate_key(k, version=version) for k in keys]
        self._soft(lambda: super(RedisCache, self).delete_many(keys, version), None, made)
