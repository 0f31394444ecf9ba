"""pytest: PostgreSQL when DATABASE_URL is set or 127.0.0.1:5432 answers, else SQLite.

Celery is not eager here: a test asserts what was queued, or opts into eager execution with the
`celery_eager` fixture, or runs a real worker on Redis (`tests/core/test_celery_worker.py`).
"""

import os
import socket

import dj_database_url

from .database import parse_database_url
from .dev import *  # noqa: F403


def _port_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": parse_database_url(os.environ["DATABASE_URL"])}
elif _port_answers("127.0.0.1", 5432):
    DATABASES = {"default": dj_database_url.parse("postgres://postgres@127.0.0.1:5432/courseops")}
else:
    DATABASES = {"default": dj_database_url.parse("sqlite:///:memory:")}
# TEST_DATABASE_NAME lets two test runs share one server without clashing.
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME", "test_courseops")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": ""}  # in memory
else:
    # A commit returns before its WAL record reaches the disk: the suite commits tens of
    # thousands of times (migrations, live servers, workers) and a CI disk's sync is slow. No
    # test here is about durability; the failover test runs its own clusters, synchronous.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = f"{_options.get('options', '')} -c synchronous_commit=off".strip()

# Tests use their own Redis database so they never touch a developer's queue.
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
# Under pytest-xdist each worker (gw0, gw1, …) and the processes it starts take the database
# below the base one, so two workers' queues, results and caches never meet.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER.startswith("gw"):
    _base, _, _db = TEST_REDIS_URL.rpartition("/")
    TEST_REDIS_URL = f"{_base}/{int(_db or 0) - int(_XDIST_WORKER[2:])}"
CELERY_BROKER_URL = TEST_REDIS_URL
CELERY_RESULT_BACKEND = TEST_REDIS_URL
# A beat started by a test elects itself by a lock in the test Redis, never a developer's.
CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler"
CELERY_REDBEAT_REDIS_URL = TEST_REDIS_URL
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_EAGER_PROPAGATES = True
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Tests change calendar rows with queryset.update() (no signal): the per-course cache is off
# here, and tests/calendar/test_cache.py turns it on against Redis to test it.
COURSE_CACHE_SECONDS = 0
SESSION_ENGINE = "django.contrib.sessions.backends.db"

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Worker processes started by tests write their e-mails to files here, so a test can count them.
if os.environ.get("TEST_EMAIL_DIR"):
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = os.environ["TEST_EMAIL_DIR"]
# … or hand them to an SMTP server on loopback (tests/peers/smtp.py), as production does.
if os.environ.get("TEST_EMAIL_SMTP_PORT"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST, EMAIL_PORT = "127.0.0.1", int(os.environ["TEST_EMAIL_SMTP_PORT"])
    EMAIL_USE_TLS = EMAIL_USE_SSL = False
