"""Personal copies over real SMTP (an aiosmtpd server on loopback): each person gets exactly one
message, addressed to them, with their own name in both parts and their own Message-ID — the
same content the console or locmem backends get from ordinary messages."""

from __future__ import annotations

import email
from email.message import Message

import pytest
from aiosmtpd.controller import Controller
from django.core import mail

from apps.core import mailbulk
from tests.peers.run import free_port

NAME = "\u2063NAME\u2063"
TEXT = f"Dear {NAME},\n\nA1 is due on Fri Nov 27, 12:47 AM PST.\n"
HTML = f"<p>Dear {NAME},</p><p>A1 is due.</p>"


class Inbox:
    def __init__(self) -> None:
        self.got: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        self.got.append((list(envelope.rcpt_tos), email.message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp_server(settings):  # type: ignore[no-untyped-def]
    inbox = Inbox()
    port = free_port()
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield inbox
    server.stop()


def _parts(msg: Message) -> tuple[str, str]:
    text = html = ""
    for part in msg.walk():
        if part.get_content_type() == "text/plain":
            text = part.get_payload(decode=True).decode()
        elif part.get_content_type() == "text/html":
            html = part.get_payload(decode=True).decode()
    return text, html


PEOPLE = [
    mailbulk.Copy("ada@uni.edu", "Ada Okafor", "Ada Okafor"),
    mailbulk.Copy("bo@uni.edu", "Bō Li-Nakamura", "Bō Li-Nakamura"),
    mailbulk.Copy("cy@uni.edu", "Cy <Admin> & Co", "Cy &lt;Admin&gt; &amp; Co"),
    mailbulk.Copy("di@uni.edu", "Di", "Di"),
    mailbulk.Copy("ed@uni.edu", "Ed", "Ed"),
]


@pytest.mark.parametrize("connections", [1, 3])
def test_every_person_gets_one_copy_with_their_own_name_over_smtp(
    smtp_server, settings, connections: int
) -> None:  # type: ignore[no-untyped-def]
    settings.SMTP_SEND_CONNECTIONS = connections
    delivered: list[int] = []
    people = [mailbulk.Copy(p.to, p.text_name, p.html_name, key=i) for i, p in enumerate(PEOPLE)]
    stream = mailbulk.Stream(delivered, queued=2)  # smaller than the copies: put waits its turn
    stream.put(mailbulk.Personal("[ee290] Reminder: A1", TEXT, HTML, NAME, people))
    stream.put(mailbulk.Personal("[ee290] Reminder: M1", TEXT, HTML, NAME, people[:2]))
    assert stream.close() is None
    assert sorted(delivered) == [0, 0, 1, 1, 2, 3, 4]
    got = smtp_server.got
    assert len(got) == 7
    assert len({m["Message-ID"] for _, m in got}) == 7
    by = {(rcpts[0], m["Subject"]): m for rcpts, m in got}
    assert len(by) == 7
    for p in PEOPLE:
        m = by[(p.to, "[ee290] Reminder: A1")]
        assert m["To"] == p.to
        text, html = _parts(m)
        assert text.startswith(f"Dear {p.text_name},")
        assert f"<p>Dear {p.html_name},</p>" in html
        assert NAME not in text + html
        assert "courseops-to" not in m.as_string()


def test_other_backends_get_the_same_messages_one_by_one(settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    stream = mailbulk.Stream([])
    stream.put(mailbulk.Personal("Reminder", TEXT, HTML, NAME, PEOPLE))
    assert stream.close() is None
    assert [m.to for m in mail.outbox] == [[p.to] for p in PEOPLE]
    assert mail.outbox[2].body.startswith("Dear Cy <Admin> & Co,")
    assert "Dear Cy &lt;Admin&gt; &amp; Co" in mail.outbox[2].alternatives[0][0]


def test_a_server_that_goes_away_is_reported_with_what_it_had_accepted(settings) -> None:  # type: ignore[no-untyped-def]
    """Nothing listens: every connection fails, `close` returns the error instead of raising
    it in a thread, nothing counts as delivered, and `put` never waits on the dead stream."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.SMTP_SEND_CONNECTIONS = 2
    delivered: list[int] = []
    stream = mailbulk.Stream(delivered, queued=1)
    people = [mailbulk.Copy(f"p{i}@uni.edu", "P", "P", key=i) for i in range(20)]
    stream.put(mailbulk.Personal("Reminder", TEXT, HTML, NAME, people))
    error = stream.close()
    assert isinstance(error, ConnectionRefusedError)
    assert delivered == []
