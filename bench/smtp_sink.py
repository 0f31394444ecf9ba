"""A local SMTP server that accepts every message and writes one line per recipient
("recipient<TAB>subject") to a file: the benches send real SMTP to it. aiosmtpd, in its own process:
`python bench/smtp_sink.py PORT FILE` (runs until terminated)."""

from __future__ import annotations

import email
import signal
import sys
import threading
from typing import Any

from aiosmtpd.controller import Controller


class Recorder:
    def __init__(self, path: str) -> None:
        self.out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        subject = " ".join(
            str(email.message_from_bytes(envelope.content).get("Subject", "")).split()
        )
        for rcpt in envelope.rcpt_tos:
            self.out.write(f"{rcpt}\t{subject}\n")
        self.out.flush()
        return "250 OK"


if __name__ == "__main__":
    port, path = int(sys.argv[1]), sys.argv[2]
    controller = Controller(Recorder(path), hostname="127.0.0.1", port=port)
    controller.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("ready", flush=True)
    done.wait()
    controller.stop()
