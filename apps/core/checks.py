"""Start-up checks (`manage.py check`, run by `make run`, `make test`, CI and every deploy) that
the names the apps reach each other by resolve in a process that has only run `django.setup()`.

The test process imports every module before anything is queued by name, so a registry entry
that only a test's imports make valid passes the suite and fails in a fresh web process (the
`peerreview.email_pairing` 500). These checks read the registries as a fresh process has them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, register
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.urls import NoReverseMatch, reverse

# A task is queued by name (`task_named` with the name) or defined by name (`@shared_task(name=…)`).
QUEUED = re.compile(r"""task_named\(\s*["']([\w.]+)["']""")
DEFINED = re.compile(r"""shared_task\([^)]*name\s*=\s*["']([\w.]+)["']""")


def _project_sources() -> Iterable[tuple[Path, str]]:
    """(path, text) of every Python file of the installed apps that are not installed packages."""
    for config in apps.get_app_configs():
        path = Path(config.path).resolve()
        if "site-packages" in path.parts or "dist-packages" in path.parts:
            continue
        for file in sorted(path.rglob("*.py")):
            if "migrations" not in file.parts:
                yield file, file.read_text(encoding="utf-8")


def _where(path: Path, text: str, pos: int) -> str:
    root = Path(settings.BASE_DIR).resolve()
    shown = path.relative_to(root) if root in path.parents else path
    return f"{shown}:{text.count(chr(10), 0, pos) + 1}"


def task_names_used() -> dict[str, str]:
    """Every task name the project queues or defines, with the first place it appears."""
    used: dict[str, str] = {}
    for key, entry in getattr(settings, "CELERY_BEAT_SCHEDULE", {}).items():
        used.setdefault(str(entry["task"]), f"CELERY_BEAT_SCHEDULE[{key!r}]")
    for path, text in _project_sources():
        for pattern in (QUEUED, DEFINED):
            for m in pattern.finditer(text):
                used.setdefault(m.group(1), _where(path, text, m.start()))
    return used


def see(check_id: str, hint: str = "") -> str:
    """A check's hint, ending with its entry in the troubleshooting guide."""
    anchor = check_id.lower().replace(".", "-")
    return f"{hint} See docs/troubleshooting.md#{anchor}".strip()


@register()
def tasks_are_registered(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Every task named anywhere is registered with the Celery app after `django.setup()`."""
    from celery import current_app

    registered = set(current_app.tasks)
    return [
        Error(
            f"Task {name!r} ({where}) is not registered in a process that has only run "
            "django.setup(): queueing it from a web process or a manage.py command raises "
            "NotRegistered.",
            hint=see("courseops.E001", "Import the app's tasks module in its AppConfig.ready()."),
            id="courseops.E001",
        )
        for name, where in sorted(task_names_used().items())
        if name not in registered
    ]


@register()
def registries_resolve(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Nav items reverse, panels' templates load, sources and subscribers are callables."""
    from apps.core import jobs, lifecycle, registry

    errors: list[CheckMessage] = []
    sections = {s.key for s in registry.STUDENT_SECTIONS} | {s.key for s in registry.STAFF_SECTIONS}
    for item in registry._NAV:
        try:
            reverse(item.url_name, kwargs={"code": "x"} if item.course_scoped else None)
        except NoReverseMatch:
            errors.append(
                Error(
                    f"Nav item {item.label!r} names URL {item.url_name!r}, which does not resolve.",
                    hint=see("courseops.E002"),
                    id="courseops.E002",
                )
            )
        errors.extend(
            Error(
                f"Nav item {item.label!r} files itself under section {key!r}, which the menu "
                "does not have.",
                hint=see("courseops.E003"),
                id="courseops.E003",
            )
            for key in {item.section, item.staff_section} - {""}
            if key not in sections
        )
    for panel in registry._PANELS:
        try:
            get_template(panel.template)
        except TemplateDoesNotExist:
            errors.append(
                Error(
                    f"Panel {panel.key!r} names template {panel.template!r}, which does not exist.",
                    hint=see("courseops.E004"),
                    id="courseops.E004",
                )
            )
    named: list[tuple[str, object]] = [
        (f"Today source {s.key!r}", s.items) for s in registry._TODAY
    ]
    named += [(f"Panel {p.key!r} context", p.context) for p in registry._PANELS]
    named += [(f"Job sweeper {k!r}", f) for k, f in jobs._SWEEPERS.items()]
    named += [
        (f"{kind.__name__} subscriber", handler)
        for kind, handlers in lifecycle._SUBSCRIBERS.items()
        for handler in handlers
    ]
    errors += [
        Error(
            f"{what} is not callable ({thing!r}).",
            hint=see("courseops.E005"),
            id="courseops.E005",
        )
        for what, thing in named
        if not callable(thing)
    ]
    return errors


@register()
def today_sources_say_what_they_read(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A student's Today is cached until a write to what its sources read (apps.core.todaycache):
    each source students see names it, with labels that resolve."""
    from apps.core import registry
    from apps.core.models import Role

    errors: list[CheckMessage] = []
    for source in registry._TODAY:
        if Role.STUDENT not in source.roles:
            continue
        labels = source.read_labels()
        bad = [label for label in labels if not _label_resolves(label)]
        if not labels or bad:
            what = (
                f"reads {', '.join(map(repr, sorted(set(bad))))}: no installed app or model"
                if bad
                else "does not say what it reads"
            )
            errors.append(
                Error(
                    f"Today source {source.key!r} {what}; a student's Today would be kept in "
                    "the cache after a write that changes it.",
                    hint=see("courseops.E007", "Give it reads=(app or model labels, …)."),
                    id="courseops.E007",
                )
            )
    from apps.core.todaycache import declared_labels

    named = declared_labels() | {label for p in registry._PANELS for label in p.read_labels()}
    bad = sorted(label for label in named if not _label_resolves(label))
    if bad:
        errors.append(
            Error(
                f"A cached read names {', '.join(map(repr, bad))}: no installed app or model; "
                "its writes would not be watched.",
                hint=see("courseops.E007", "Fix the label given to todaycache.reads()."),
                id="courseops.E007",
            )
        )
    return errors


def _label_resolves(label: str) -> bool:
    try:
        if "." in label:
            apps.get_model(label)
        else:
            apps.get_app_config(label)
    except (LookupError, ValueError):
        return False
    return True


@register()
def door_limits_configured(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Every door a stranger can knock on has a limit in `DOOR_LIMITS` (apps.core.doors)."""
    from apps.core.doors import check_limits

    hint = see("courseops.E031", "Give the door a whole-number limit in DOOR_LIMITS.")
    return [Error(problem, hint=hint, id="courseops.E031") for problem in check_limits()]
