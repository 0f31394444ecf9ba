"""Where a server's time goes under load: py-spy samples every gunicorn worker (from outside the
process, so the profile costs the server nothing measurable) while wrk drives it, and this
module sums the collapsed stacks into the share of samples each function is on (inclusive) and
at the top of (self). `bench/load.py` calls it when LOAD_PROFILE names the mix's pages
(LOAD_PROFILE=1 for the whole mix, or e.g. LOAD_PROFILE=/c/{code}/ for the dashboard alone).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

BIN = Path(sys.executable).parent
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^:()]+)(?::\d+)?\)$")


def record(pid: int, seconds: int, out: Path) -> subprocess.Popen[bytes]:
    """Start sampling the server `pid` and its workers for `seconds` (raw collapsed stacks)."""
    return subprocess.Popen(
        [
            str(BIN / "py-spy"),
            "record",
            "--pid",
            str(pid),
            "--subprocesses",
            "--duration",
            str(seconds),
            "--rate",
            "200",
            "--format",
            "raw",
            "--nonblocking",
            "--output",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _name(frame: str, root: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    file = m["file"]
    if "site-packages/" in file:
        file = file.split("site-packages/", 1)[1]
    elif root in file:
        file = file.split(root, 1)[1].lstrip("/")
    return f"{m['func']} ({file})"


def summary(raw: Path, root: str, top: int = 30) -> str:
    """The `top` functions by inclusive share of the samples, with their self share."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_name(f, root) for f in stack.split(";")]
        total += n
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    if not total:
        return "py-spy: no samples (is py-spy allowed to read other processes here?)"
    lines = [f"py-spy: {total} samples of the web workers; inclusive % / self %, function (file)"]
    # The frames every request passes through (gunicorn, the handler, the middleware chain) say
    # nothing about a page: leave out whatever is on more than 85 % of the samples.
    for f, n in inclusive.most_common(top + 60):
        if n > 0.85 * total or f.startswith(("<module>", "process ")):
            continue
        lines.append(f"  {100 * n / total:5.1f} / {100 * own[f] / total:4.1f}  {f}")
        if len(lines) > top:
            break
    return "\n".join(lines)
