"""Shared by the bench scripts."""

from __future__ import annotations

import socket


def port_answers(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on host:port (PostgreSQL, Redis, the server under load)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
