"""Links point where the site is: `make run` on another port mails and feeds links to that
port, and a production server refuses to start without an explicit SITE_URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_links_follow_its_port() -> None:
    shown = subprocess.run(
        [
            "make",
            "-s",
            "--no-print-directory",
            "PORT=8722",
            "--eval",
            "site: ; @echo $$SITE_URL",
            "site",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "SITE_URL"},
        check=True,
    )
    assert shown.stdout.strip() == "http://127.0.0.1:8722"


def test_production_will_not_start_without_a_site_url() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    env |= {
        "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
        "SECRET_KEY": "x" * 60,
        "ALLOWED_HOSTS": "courseops.example.edu",
    }
    start = [sys.executable, "-c", "import django; django.setup()"]
    refused = subprocess.run(start, cwd=ROOT, capture_output=True, text=True, env=env)
    assert refused.returncode != 0
    assert "Set SITE_URL to the address people use" in refused.stderr
    env["SITE_URL"] = "https://courseops.example.edu"
    assert subprocess.run(start, cwd=ROOT, capture_output=True, env=env).returncode == 0
