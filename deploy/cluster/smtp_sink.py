"""An SMTP server that keeps every message as a file (<dir>/<n>.eml) and answers 250: the
cluster's mail host. `python smtp_sink.py HOST PORT DIR`; runs until killed."""

from __future__ import annotations

import itertools
import sys
import threading
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller


class Keep:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.numbers = itertools.count(1)
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            n = next(self.numbers)
        for i, rcpt in enumerate(envelope.rcpt_tos):
            (self.folder / f"{n:07d}-{i}.eml").write_bytes(
                f"X-Envelope-To: {rcpt}\r\n".encode() + envelope.content
            )
        return "250 OK"


def main() -> None:
    host, port, folder = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    folder.mkdir(parents=True, exist_ok=True)
    controller = Controller(Keep(folder), hostname=host, port=port)
    controller.start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
