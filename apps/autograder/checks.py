"""Start-up check: every bank the course ships passes the load check (apps.autograder.banklint).

A bank is checked whole when it loads; this runs the same check over `courses/banks/` at start-up
(`manage.py check`, every deploy and CI), so a shipped bank whose key, worked solution, prompt
or rubric does not agree with itself fails before a student opens it — not on release.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, register

from apps.core.checks import see


@register()
def shipped_banks_load(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from apps.autograder.bank import BANKS, bank_checked

    return [
        Error(
            f"{path.name}: {problem}",
            hint=see(
                "autograder.E001",
                "The bank would be refused by load_course and load_demo; fix the file.",
            ),
            id="autograder.E001",
        )
        for path in sorted(BANKS.glob("*.yaml"))
        for problem in bank_checked(path.read_text(encoding="utf-8"))[1]
    ]
