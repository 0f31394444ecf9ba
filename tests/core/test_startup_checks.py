"""`manage.py check` in a fresh process: what a web process or a manage.py command has after
`django.setup()` alone, not what the test process happens to have imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_fresh_process_passes_the_start_up_checks() -> None:
    done = _check({"DJANGO_SETTINGS_MODULE": "courseops.settings.dev"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_planted_names_that_do_not_resolve_fail_the_check(tmp_path: Path) -> None:
    app = tmp_path / "planted"
    app.mkdir()
    (app / "__init__.py").write_text("")
    # A task defined in tasks.py that ready() never imports, queued by name from a service —
    # the shape of the peerreview.email_pairing 500 — and a nav item naming a missing page.
    (app / "tasks.py").write_text(
        "from celery import shared_task\n\n\n"
        '@shared_task(name="planted.email_people")\n'
        "def email_people() -> None:\n"
        "    pass\n"
    )
    (app / "services.py").write_text(
        "from apps.core.queue import task_named\n\n\n"
        "def thing_do() -> None:\n"
        '    task_named("planted.email_people").delay()\n'
    )
    (app / "apps.py").write_text(
        "from django.apps import AppConfig\n\n\n"
        "class PlantedConfig(AppConfig):\n"
        '    name = "planted"\n\n'
        "    def ready(self) -> None:\n"
        "        from apps.core.registry import NavItem, register_nav\n\n"
        '        register_nav(NavItem("Nowhere", "planted:missing", section="help"))\n'
    )
    (tmp_path / "planted_settings.py").write_text(
        "from courseops.settings.dev import *  # noqa: F403\n\n"
        'INSTALLED_APPS = [*INSTALLED_APPS, "planted"]  # noqa: F405\n'
    )
    done = _check(
        {
            "DJANGO_SETTINGS_MODULE": "planted_settings",
            "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        }
    )
    assert done.returncode != 0
    assert "courseops.E001" in done.stderr
    assert "Task 'planted.email_people'" in done.stderr
    assert "planted/services.py:5" in done.stderr or "planted/tasks.py:4" in done.stderr
    assert "Import the app's tasks module in its AppConfig.ready()" in done.stderr
    assert "courseops.E002" in done.stderr
    assert "'planted:missing'" in done.stderr


def test_a_door_without_a_limit_fails_the_check(settings) -> None:  # type: ignore[no-untyped-def]
    """Every door the code knocks on (apps/core/doors.py) has a limit in DOOR_LIMITS."""
    from apps.core.checks import door_limits_configured

    assert door_limits_configured() == []
    limits = dict(settings.DOOR_LIMITS)
    limits.pop("checkin-code")
    limits["reset-address"] = {"tries": 0, "window_s": 3600}
    settings.DOOR_LIMITS = limits
    said = [m.msg for m in door_limits_configured()]
    assert any("'checkin-code'" in m for m in said)
    assert any("'reset-address'" in m and "≥ 1" in m for m in said)
