"""Start-up check: every bank the course ships passes the load check (apps.autograder.banklint).

A bank is checked whole when it loads; this runs the same check over `courses/banks/` at start-up
(`manage.py check`, every deploy and CI), so a shipped bank whose key, worked solution, prompt
or rubric does not agree with itself fails before a student opens it — not on release.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.core.checks import CheckMessage, Error, register

from apps.autograder.banklint import bank_problems
from apps.core.checks import see


@register()
def shipped_banks_load(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from apps.autograder.bank import BANKS

    errors: list[CheckMessage] = []
    for path in sorted(BANKS.glob("*.yaml")):
        try:
            spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            errors.append(
                Error(
                    f"{path.name} is not valid YAML ({exc})",
                    hint=see("autograder.E001", "Fix the file's YAML."),
                    id="autograder.E001",
                )
            )
            continue
        errors += [
            Error(
                f"{path.name}: {problem}",
                hint=see(
                    "autograder.E001",
                    "The bank would be refused by load_course and load_demo; fix the file.",
                ),
                id="autograder.E001",
            )
            for problem in bank_problems(spec)
        ]
    return errors
