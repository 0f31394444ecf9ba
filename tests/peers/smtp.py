"""An SMTP server on loopback (aiosmtpd) that a test can stop in the middle of a batch and start
again on the same port, as a restarting mail server does to its clients."""

from __future__ import annotations

import threading

import pytest
from aiosmtpd.controller import Controller

from tests.peers.run import free_port


class Sink:
    """Accepts messages until `stop_after` have arrived, then stops its server (what a
    restarting mail server does to a client in the middle of a batch)."""

    def __init__(self, port: int, stop_after: int | None = None) -> None:
        self.port, self.stop_after = port, stop_after
        self.got: list[str] = []  # one recipient address per copy taken
        self.messages: list[bytes] = []  # each message taken, as it arrived
        self.down = False
        self.server: Controller | None = None

    def start(self) -> None:
        self.down = False
        self.server = Controller(self, hostname="127.0.0.1", port=self.port)
        self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        if self.down:
            return "421 4.3.2 Service shutting down"
        self.got.extend(envelope.rcpt_tos)
        self.messages.append(envelope.original_content or envelope.content)
        if self.stop_after is not None and len(self.got) >= self.stop_after:
            self.down = True
            threading.Thread(target=self.stop).start()
        return "250 OK"


@pytest.fixture
def sink(settings):  # type: ignore[no-untyped-def]
    box = Sink(free_port())
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", box.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 5
    yield box
    box.stop()
