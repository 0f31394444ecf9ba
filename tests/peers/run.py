"""Start a protocol peer (a test OpenID provider, SAML IdP or LTI platform) as its own process
on loopback, wait until it answers, stop it afterwards; `stop` ends any process a test started,
with everything it forked."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]


def stop(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """End `proc` (started with `start_new_session=True`) and every process it forked: TERM to it
    (a warm shutdown), then KILL to its whole process group. A Celery prefork child or a gunicorn
    worker left behind keeps a connection to the test database, which then cannot be dropped at
    the end of the run nor created afresh by the next one."""
    if proc.poll() is None:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def peer(module: str, args: list[str], ready_url: str, env: dict[str, str]) -> Iterator[None]:
    # Its output goes to a file, never a pipe nobody reads: a peer serving a whole pytest
    # worker's tests logs every request and would block once a pipe's 64 KB filled.
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                log.seek(0)
                out = log.read().decode(errors="replace")
                raise RuntimeError(f"{module} exited with {proc.returncode}:\n{out[-3000:]}")
            try:
                if requests.get(ready_url, timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{module} did not answer {ready_url} within 60 s")
            time.sleep(0.2)
        yield
    finally:
        stop(proc, timeout=10)
        log.close()
