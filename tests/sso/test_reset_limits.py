"""Password reset cannot flood a mailbox (25 requests for one address in a second sent 25
e-mails): at most 3 e-mails an hour to one address and 20 requests an hour from one client are
acted on; past either, nothing is sent and the answer is exactly the same page."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client

from apps.core.models import AuditEvent
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RESET = "/accounts/password/reset/"


def _ask(capture, email: str, address: str = "127.0.0.1") -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """Ask for a reset as a browser does; the worker's half runs in-process at commit."""
    c = Client(REMOTE_ADDR=address)
    with capture(execute=True):
        r = c.post(RESET, {"email": email})
    page = c.get(r["Location"]).content.decode()
    return r.status_code, r["Location"], page


def test_the_fourth_reset_in_an_hour_sends_nothing_and_answers_the_same(  # type: ignore[no-untyped-def]
    celery_eager, django_capture_on_commit_callbacks
) -> None:
    UserFactory(email="lost@uni.example")
    UserFactory(email="other@uni.example")
    ask = django_capture_on_commit_callbacks
    answers = [
        _ask(ask, spelling)
        for spelling in ("lost@uni.example", "Lost@Uni.example", "LOST@uni.example ")
    ]
    assert len(mail.outbox) == 3
    answers.append(_ask(ask, "lost@uni.example"))
    assert len(mail.outbox) == 3  # the 4th sent nothing …
    assert answers[3] == answers[0]  # … and answered exactly as the 1st did
    assert answers[0][:2] == (302, "/accounts/password/reset/sent/")
    assert AuditEvent.objects.filter(action="auth.reset_limited").count() == 1
    _ask(ask, "other@uni.example")  # someone else is not affected
    assert [m.to for m in mail.outbox[3:]] == [["other@uni.example"]]


def test_one_client_asking_for_many_addresses_is_stopped_and_others_are_not(  # type: ignore[no-untyped-def]
    celery_eager, django_capture_on_commit_callbacks
) -> None:
    for i in range(22):
        UserFactory(email=f"s{i:02}@uni.example")
    ask = django_capture_on_commit_callbacks
    answers = [_ask(ask, f"s{i:02}@uni.example", "198.51.100.9") for i in range(21)]
    assert len(mail.outbox) == 20
    assert answers[20] == answers[0]
    _ask(ask, "s21@uni.example", "203.0.113.4")  # another client: sent
    assert mail.outbox[-1].to == ["s21@uni.example"]
