"""The deadline-hour read mix for bench/load.py: logged-in students, each request one of the
dashboard, the slack page, the node page, slack/me and the question sets. Sessions come from a
file the driver writes (LOAD_SESSIONS), so no password hashing happens under load."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable

import gevent
from locust import FastHttpUser, between, task

SESSIONS = json.loads(open(os.environ["LOAD_SESSIONS"], encoding="utf-8").read())  # noqa: SIM115
CODE = os.environ.get("LOAD_COURSE", "ee290-sp26")
OPEN_LOOP = os.environ.get("LOAD_OPEN_LOOP_RPS_PER_USER")
ONLY = os.environ.get("LOAD_ONLY")  # one path instead of the mix, to study one page


def poisson_arrivals(rate: float) -> Callable[[Student], float]:
    """Each user sends on its own Poisson schedule (exponential gaps of mean 1/rate, measured
    from the previous send, not from the response), so 50 users at 2/s are one stream of 100
    arrivals a second at random instants: an open loop. Locust's constant_throughput keeps
    the users in step: they all start in the same second, so every 0.5 s 50 requests arrived
    together and the figure measured how fast a burst of 50 drains, not a steady 100/s."""

    def wait(user: Student) -> float:
        now = time.monotonic()
        user.next_at = max(now, getattr(user, "next_at", now) + random.expovariate(rate))
        return user.next_at - now

    return wait


class Student(FastHttpUser):
    """FastHttpUser (geventhttpclient): the load generator shares the 2 cores with the server,
    and the requests-based HttpUser spent most of one core on itself."""

    wait_time = poisson_arrivals(float(OPEN_LOOP)) if OPEN_LOOP else between(0, 0)
    next_at: float

    def on_start(self) -> None:
        self.cookie = f"sessionid={random.choice(SESSIONS)}"
        if OPEN_LOOP:  # the first request too at a random instant, not all 50 at spawn
            gevent.sleep(random.expovariate(float(OPEN_LOOP)))
            self.next_at = time.monotonic()

    def _get(self, url: str, name: str) -> None:
        """Only a 200 counts: a redirect to the log-in page is a failure, not a fast page."""
        if ONLY:
            url, name = ONLY.format(code=CODE), ONLY
        with self.client.get(
            url,
            name=name,
            headers={"Cookie": self.cookie},
            allow_redirects=False,
            catch_response=True,
        ) as r:
            if r.status_code != 200:
                r.failure(f"status {r.status_code}")

    @task
    def dashboard(self) -> None:
        self._get(f"/c/{CODE}/", "dashboard")

    @task
    def slack_page(self) -> None:
        self._get(f"/c/{CODE}/slack/", "slack page")

    @task
    def node_page(self) -> None:
        self._get(f"/c/{CODE}/node/", "node page")

    @task
    def slack_me(self) -> None:
        self._get(f"/api/v1/courses/{CODE}/slack/me/", "slack/me")

    @task
    def question_sets(self) -> None:
        self._get(f"/c/{CODE}/questions/", "question sets")
