"""More than one `celery beat` may run; exactly one schedules, and when it dies another takes over
within a minute without firing anything twice (courseops/settings/base.py, RedBeat).

Real processes on the test Redis: two beats of the app as it ships (its RedBeat settings, its
30 s lock) with one probe entry every 2 s (tests/cluster/beat_probe.py), and a worker that
records the time of every run. The beat holding the lock is killed with SIGKILL (no chance to
release it): the other must start sending within BEAT_LOCK_TIMEOUT_S + one loop, and no two runs
may fall in one 2 s slot, before, across or after the takeover."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings

from tests.peers.run import stop

pytestmark = [pytest.mark.redis, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
EVERY_S = 2.0
SENT = re.compile(r"\[(\S+ \S+): INFO/MainProcess\] Scheduler: Sending due task probe")


def _celery(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.cluster.beat_probe", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait(cond, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.5)
    return False


def test_two_beats_one_schedules_and_the_other_takes_over_within_a_minute(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = settings.CELERY_BROKER_URL
    client = redis.Redis.from_url(url, decode_responses=True)
    prefix = f"beat-probe-{uuid.uuid4().hex[:8]}:"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.test",
        "TEST_REDIS_URL": url,
        "BEAT_PROBE_PREFIX": prefix,
        "BEAT_PROBE_EVERY_S": str(EVERY_S),
    }
    env.pop("PYTEST_XDIST_WORKER", None)  # the URL above is already this worker's database
    logs = {name: tmp_path / f"{name}.log" for name in ("worker", "a", "b")}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    runs = lambda: [float(t) for t in client.lrange(prefix + "runs", 0, -1)]  # noqa: E731
    acquired = lambda name: "beat: Acquired lock" in logs[name].read_text()  # noqa: E731
    try:
        procs["worker"] = _celery(
            [
                "worker",
                "-P",
                "solo",
                "-Q",
                prefix + "queue",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=INFO",
            ],
            env,
            logs["worker"],
        )
        for name in ("a", "b"):
            procs[name] = _celery(["beat", "--loglevel=INFO"], env, logs[name])
        assert _wait(lambda: len(runs()) >= 4, 120), "no beat scheduled the probe"
        holders = [name for name in ("a", "b") if acquired(name)]
        assert len(holders) == 1, f"beats holding the lock: {holders}"
        holder, standby = holders[0], ({"a", "b"} - set(holders)).pop()
        assert "Sending due task probe" not in logs[standby].read_text()

        os.killpg(procs[holder].pid, signal.SIGKILL)
        killed_at = time.time()
        assert _wait(lambda: len([t for t in runs() if t > killed_at]) >= 4, 120), (
            f"the standby beat never took over:\n{logs[standby].read_text()[-3000:]}"
        )
        assert acquired(standby)
        takeover_s = min(t for t in runs() if t > killed_at) - killed_at
        # The lock lapses BEAT_LOCK_TIMEOUT_S (30 s) after the holder's last renewal; the standby
        # tries every 5 s (CELERY_BEAT_MAX_LOOP_INTERVAL).
        assert takeover_s < 60, f"takeover took {takeover_s:.0f} s"

        # When each beat decided to send (its own log), not when the worker ran it: a worker
        # that starts late runs a backlog at once.
        sends = sorted(
            dt.datetime.strptime(m, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=dt.UTC).timestamp()
            for name in ("a", "b")
            for m in SENT.findall(logs[name].read_text())
        )
        gaps = [b - a for a, b in itertools.pairwise(sends)]
        assert min(gaps) > EVERY_S / 2, f"two sends in one slot: gaps {gaps}"
        assert _wait(lambda: len(runs()) >= len(sends), 30), (len(runs()), len(sends))
        sys.stderr.write(
            f"takeover after SIGKILL: {takeover_s:.1f} s; {len(sends)} sends, min gap "
            f"{min(gaps):.2f} s\n"
        )
    finally:
        for proc in procs.values():
            stop(proc, timeout=10)
        keys = list(client.scan_iter(f"*{prefix}*"))  # its entries, and kombu's queue bindings
        if keys:
            client.delete(*keys)
