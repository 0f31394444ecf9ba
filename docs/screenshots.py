"""`make screenshots`: the guides' pictures, taken from the demo itself in Debian's Chromium.

Starts `manage.py first_look` on a fresh SQLite file (the demo exactly as `make run` shows it)
on a free port, logs in as each demo role and photographs each task's page at 1280 px and at
390 px (a phone), first screen only, into docs/screens/guide/<task>-<width>.jpg. The guides
reference these files; the docs build (-W) fails when one is missing, so the pictures never
drift silently from the app. Run it again after changing a page the guides show.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screens" / "guide"
CHROMIUM = "/usr/bin/chromium"
COURSE = "/c/ee290-sp26/"
PASSWORD = "courseops-demo"
WIDTHS = {1280: 800, 390: 844}

# (file name, who, path under the course — or from the site's root when it starts with "/" — or
# a "link:" to follow from a page)
SHOTS: list[tuple[str, str, str]] = [
    ("student-today", "student01@example.edu", ""),
    ("student-checkin", "student01@example.edu", "checkin/"),
    ("student-slack", "student01@example.edu", "slack/"),
    ("student-node", "student01@example.edu", "node/"),
    ("student-ssh-keys", "student01@example.edu", "/accounts/ssh-keys/"),
    ("student-questions", "student01@example.edu", "questions/"),
    ("student-question-set", "student01@example.edu", "questions/a1-numbers/"),
    ("student-extensions", "student01@example.edu", "extensions/"),
    ("student-practice", "student01@example.edu", "questions/roofline-practice/"),
    ("student-calendar", "student01@example.edu", "calendar/"),
    ("student-scribing", "student01@example.edu", "scribing/"),
    ("student-peer-review", "student01@example.edu", "peer-review/"),
    ("student-checkoffs", "student01@example.edu", "checkoffs/"),
    ("student-group", "student01@example.edu", "group/"),
    ("student-milestones", "student01@example.edu", "milestones/"),
    ("student-contributions", "student01@example.edu", "contributions/"),
    ("student-gradebook", "student01@example.edu", "gradebook/"),
    ("student-lab", "student01@example.edu", "link:labs/"),
    ("ta-today", "ta1@example.edu", ""),
    ("ta-question-set", "ta1@example.edu", "questions/a1-numbers/"),
    ("ta-regrades", "ta1@example.edu", "regrades/"),
    ("ta-extensions", "ta1@example.edu", "extensions/"),
    ("ta-checkoff-day", "ta1@example.edu", "checkoffs/schedule/"),
    ("ta-checkin", "ta1@example.edu", "checkin/"),
    ("ta-participation", "ta1@example.edu", "participation/"),
    ("instructor-today", "instructor@example.edu", ""),
    ("instructor-roster", "instructor@example.edu", "roster/"),
    ("instructor-groups", "instructor@example.edu", "groups/"),
    ("instructor-compute", "instructor@example.edu", "compute/"),
    ("instructor-scribing", "instructor@example.edu", "scribing/"),
    ("instructor-peer-review", "instructor@example.edu", "peer-review/"),
    ("instructor-slack", "instructor@example.edu", "slack/staff/"),
    ("instructor-gradebook", "instructor@example.edu", "gradebook/"),
    ("instructor-lms", "instructor@example.edu", "lms/"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


WAIT_S = 600  # a first run migrates and loads the demo: about a minute here, more on a slow machine


@contextlib.contextmanager
def serving(
    command: list[str], port: int, env: dict[str, str], wait_s: float = WAIT_S
) -> Iterator[subprocess.Popen[str]]:
    """Run `command` (a server on `port`) in its own process group, wait until it answers —
    printing what it is doing every few seconds, at most `wait_s` — and always stop the whole
    group afterwards, also when it never answered or the caller failed."""
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            _wait_until_ready(proc, port, log, wait_s)
            yield proc
        finally:
            _stop(proc)


def _last_line(log: IO[str]) -> str:
    log.flush()
    log.seek(0)
    lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    log.seek(0, io.SEEK_END)
    return lines[-1][:120] if lines else "starting"


def _wait_until_ready(proc: subprocess.Popen[str], port: int, log: IO[str], wait_s: float) -> None:
    started = time.monotonic()
    said = 0.0
    while (waited := time.monotonic() - started) < wait_s:
        if proc.poll() is not None:
            log.seek(0)
            raise SystemExit(f"the demo server exited:\n{log.read()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5):
                print(f"== the demo server answers after {waited:.0f} s", flush=True)
                return
        except OSError:
            if waited - said >= 5:
                said = waited
                print(
                    f"== waiting for the demo server, {waited:.0f} s: {_last_line(log)}", flush=True
                )
            time.sleep(0.5)
    raise SystemExit(
        f"the demo server did not answer within {wait_s:.0f} s (last: {_last_line(log)}); "
        "it has been stopped. On a slow machine: python docs/screenshots.py --wait 1200"
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    """The server and everything it started (the autoreloader's child): TERM, then KILL."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


def _server_command(db: Path, port: int) -> tuple[list[str], dict[str, str]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "EMAIL_HOST", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DATABASE_URL=f"sqlite:///{db}",
        DJANGO_SETTINGS_MODULE="courseops.settings.dev",
        SITE_URL=f"http://127.0.0.1:{port}",
        PYTHONUNBUFFERED="1",  # its progress reaches the log as it happens
    )
    command = ["manage.py", "first_look", "courses/ee290-sp26.yaml", "--serve"]
    return [sys.executable, *command, f"127.0.0.1:{port}"], env


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    wait_s = float(sys.argv[sys.argv.index("--wait") + 1]) if "--wait" in sys.argv else WAIT_S
    with tempfile.TemporaryDirectory(prefix="screens-") as tmp:
        command, env = _server_command(Path(tmp) / "db.sqlite3", port)
        with serving(command, port, env, wait_s), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            contexts = {}
            for name, who, where in SHOTS:
                for width, height in WIDTHS.items():
                    key = (who, width)
                    if key not in contexts:
                        ctx = browser.new_context(
                            viewport={"width": width, "height": height},
                            timezone_id="America/Los_Angeles",
                        )
                        page = ctx.new_page()
                        page.goto(f"{base}/accounts/login/")
                        page.get_by_label("Email").fill(who)
                        page.get_by_label("Password").fill(PASSWORD)
                        page.get_by_role("button", name="Log in").click()
                        page.wait_for_load_state("load")
                        contexts[key] = page
                    page = contexts[key]
                    url = base + (where if where.startswith("/") else COURSE + where)
                    if where.startswith("link:"):
                        listing = base + COURSE + where[5:]
                        page.goto(listing)
                        rx = re.escape(COURSE + where[5:]) + r"[\w-]+/$"
                        hrefs = page.eval_on_selector_all(
                            "main a[href]", "as => as.map(a => a.getAttribute('href'))"
                        )
                        url = base + next(h for h in hrefs if re.match(rx, h))
                    answer = page.goto(url)
                    if answer is None or answer.status != 200:
                        raise SystemExit(f"{name}: {url} answered {answer and answer.status}")
                    page.wait_for_load_state("load")
                    target = OUT / f"{name}-{width}.jpg"
                    page.screenshot(path=str(target), type="jpeg", quality=60)
                    print(f"{target.relative_to(ROOT)}  ({url[len(base) :]})")
            browser.close()


if __name__ == "__main__":
    main()
