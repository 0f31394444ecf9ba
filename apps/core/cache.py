"""Django's Redis cache backend, keeping one Redis client per connection pool.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every get, set and delete,
and each one builds its table of ~170 response callbacks: on a page that reads its session and
the course calendar from the cache, that cost about as much Python as the reads themselves
(`bench/profile_pages.py`). A client over a pool is safe to share, and Django already keeps one
cache object (so one of these) per thread.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


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


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
