#!/usr/bin/env python3
"""courseops node agent: one GPU sample to courseops, run from cron every 5 minutes.

Standard library only. Reads utilisation and memory of every GPU with nvidia-smi and posts them
with the node's token (issued on the node's agent page in courseops).

Install on the node (as root):
    install -m 0755 courseops_agent.py /usr/local/bin/courseops-agent
    echo 'COURSEOPS_URL=https://courseops.example.edu' > /etc/courseops-agent.env
    echo 'COURSEOPS_TOKEN=cna_...' >> /etc/courseops-agent.env
    chmod 600 /etc/courseops-agent.env
    echo '*/5 * * * * root . /etc/courseops-agent.env && /usr/local/bin/courseops-agent' \
        > /etc/cron.d/courseops-agent
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

QUERY = ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits"]


def sample(output: str | None = None) -> list[dict[str, float]]:
    """Parse nvidia-smi's CSV: one 'util, mem' line per GPU."""
    if output is None:
        output = subprocess.run(QUERY, check=True, capture_output=True, text=True).stdout  # noqa: S603
    gpus = []
    for line in output.strip().splitlines():
        util, mem = (part.strip() for part in line.split(",")[:2])
        gpus.append({"util": float(util), "mem_used_mib": int(float(mem))})
    return gpus


def post(url: str, token: str, gpus: list[dict[str, float]]) -> int:
    req = urllib.request.Request(  # noqa: S310
        url.rstrip("/") + "/api/v1/compute/agent/samples/",
        data=json.dumps({"gpus": gpus}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        print(f"courseops-agent: {exc.code} {exc.read().decode(errors='replace')}", file=sys.stderr)  # noqa: T201
        return int(exc.code)


def main() -> int:
    url, token = os.environ.get("COURSEOPS_URL", ""), os.environ.get("COURSEOPS_TOKEN", "")
    if not url or not token:
        print("courseops-agent: set COURSEOPS_URL and COURSEOPS_TOKEN", file=sys.stderr)  # noqa: T201
        return 2
    status = post(url, token, sample(os.environ.get("COURSEOPS_AGENT_FAKE_SMI")))
    return 0 if status in (200, 201) else 1


if __name__ == "__main__":
    sys.exit(main())
