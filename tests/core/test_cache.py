"""The project's Redis cache backend (Django's, with one Redis client per pool) against the real
Redis: what is written is read back, sessions hold across requests, and no client is rebuilt per
call."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.test import Client

from apps.core.models import Role
from tests.factories import CourseFactory, member

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


@pytest.fixture
def project_cache(settings):  # type: ignore[no-untyped-def]
    settings.CACHES = {
        "default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": settings.TEST_REDIS_URL}
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    cache.clear()
    yield
    cache.clear()


def test_values_round_trip_and_one_client_serves_every_call(project_cache) -> None:  # type: ignore[no-untyped-def]
    cache.set("a", {"x": [1, 2]}, 30)
    cache.set_many({"b": 2, "c": "three"}, 30)
    assert cache.get("a") == {"x": [1, 2]}
    assert cache.get_many(["a", "b", "c", "missing"]) == {"a": {"x": [1, 2]}, "b": 2, "c": "three"}
    assert cache.incr("b") == 3
    assert cache.add("b", 99) is False
    cache.delete("a")
    assert cache.get("a", "gone") == "gone"
    inner = cache._cache  # type: ignore[attr-defined]
    assert inner.get_client() is inner.get_client(write=True)  # one server: one client, reused

    seen: list[object] = []  # another thread has its own cache object, and sees the same data
    t = threading.Thread(target=lambda: seen.append(cache.get("c")))
    t.start()
    t.join()
    assert seen == ["three"]


def test_a_logged_in_student_stays_logged_in_across_requests(project_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    student = member(course, Role.STUDENT)
    client = Client()
    client.force_login(student)
    for _ in range(3):
        assert client.get(f"/c/{course.code}/").status_code == 200
    cache.clear()  # Redis emptied (a restart): the session is still in the database
    assert client.get(f"/c/{course.code}/").status_code == 200
