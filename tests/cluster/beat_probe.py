"""The Celery app as it ships, plus one entry that fires every BEAT_PROBE_EVERY_S seconds and a
task that records each run: `celery -A tests.cluster.beat_probe beat|worker`. The beats elect
one scheduler exactly as production's do (the same RedBeat settings); the entry and its state
live under their own key prefix (BEAT_PROBE_PREFIX), so the real schedule is never touched."""

from __future__ import annotations

import os
import time

import redis

from courseops.celery import app

PREFIX = os.environ.get("BEAT_PROBE_PREFIX", "beat-probe:")
EVERY_S = float(os.environ.get("BEAT_PROBE_EVERY_S", "2"))
QUEUE = PREFIX + "queue"

# Reading a setting loads the configuration (and runs courseops.celery's hook) first, so these
# replace what it set rather than being replaced by it.
assert app.conf.redbeat_redis_url
app.conf.update(
    redbeat_key_prefix=PREFIX,
    beat_schedule={
        "probe": {"task": "tests.beat_probe", "schedule": EVERY_S, "options": {"queue": QUEUE}}
    },
)


@app.task(name="tests.beat_probe")
def beat_probe() -> None:
    """Append the time of this run to the list `<prefix>runs` in the beat's Redis."""
    client = redis.Redis.from_url(app.conf.redbeat_redis_url)
    client.rpush(PREFIX + "runs", repr(time.time()))
