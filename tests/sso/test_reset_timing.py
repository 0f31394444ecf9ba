"""Password reset tells nobody, by its time, whether an address has an account: the request
only queues the worker's half, and a real worker sends the e-mail to a real SMTP server."""

from __future__ import annotations

import re
import statistics
import time

import pytest
import requests

from tests.conftest import ROOT
from tests.factories import UserFactory

N = 25
pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def _ask(live_server, email: str) -> float:  # type: ignore[no-untyped-def]
    s = requests.Session()
    page = s.get(f"{live_server.url}/accounts/password/reset/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    start = time.perf_counter()
    r = s.post(
        page.url,
        data={"csrfmiddlewaretoken": token.group(1), "email": email},
        headers={"Referer": page.url},
        timeout=10,
        allow_redirects=False,
    )
    took = time.perf_counter() - start
    assert r.status_code == 302
    assert r.headers["Location"] == "/accounts/password/reset/sent/"
    return took


def _until(done, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_known_and_unknown_addresses_answer_in_the_same_time(  # type: ignore[no-untyped-def]
    live_server, celery_worker_process, sink, settings
) -> None:
    # Timing, not limits (tests/sso/test_reset_limits.py): every request here is acted on.
    settings.DOOR_LIMITS = {
        **settings.DOOR_LIMITS,
        "reset-address": {"tries": 10 * N, "window_s": 3600},
        "reset-client": {"tries": 10 * N, "window_s": 3600},
    }
    sink.start()
    celery_worker_process(TEST_EMAIL_SMTP_PORT=str(sink.port))
    UserFactory(email="known@campus.example.edu")
    _ask(live_server, "warm@campus.example.edu")  # the first request pays for imports
    known: list[float] = []
    unknown: list[float] = []
    for i in range(N):  # interleaved, each first in turn: the machine's noise falls on both
        pair = [("known@campus.example.edu", known), ("nobody@campus.example.edu", unknown)]
        for email, times in pair if i % 2 else pair[::-1]:
            times.append(_ask(live_server, email))
            # The worker's sending must not fall on the next request's clock (two cores).
            _until(lambda: len(sink.got) >= len(known))
    k, u = statistics.median(known) * 1000, statistics.median(unknown) * 1000
    said = f"password reset, median of {N}: known {k:.1f} ms, unknown {u:.1f} ms\n"
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "password-reset-timing.txt").write_text(said)
    # Django's own form answered known addresses 6x slower (88 ms against 14 ms); the same work
    # for both is within 5 ms, or a tenth of the slower median on a machine shared with the
    # rest of the suite (a leak of the e-mail's rendering and sending is far past either).
    assert abs(k - u) < max(5.0, 0.1 * max(k, u)), said

    _until(lambda: len(sink.got) >= N)
    assert sink.got == ["known@campus.example.edu"] * N  # the worker sent each; nobody else
    assert b"/accounts/password/reset/" in sink.messages[0]
