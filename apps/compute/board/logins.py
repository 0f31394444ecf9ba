"""The login name each person gets on the course's nodes, for the SSH line, the access files and
the e-mails the board sends. The cloud puts the same names into each node's `ssh-keys`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db.models import Q


def _local(email: str) -> tuple[str, bool]:
    """The e-mail's local part made safe for Linux, and whether it had to change."""
    raw = email.split("@", 1)[0].lower()
    name = re.sub(r"[^a-z0-9_-]", "_", raw).strip("-") or "user"
    if not (name[0].isalpha() or name[0] == "_"):
        name = f"u{name}"
    return name, name != raw


def unix_names(course_id: int, user_ids: Iterable[int]) -> dict[int, str]:
    """The login name each person gets on the course's nodes: their e-mail's local part (a-z,
    0-9, _ and -), with their id added when it had to be changed or when someone else in the
    course has the same local part at another domain — so two people never share one."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    ids = list(user_ids)
    rows = dict(users.filter(pk__in=ids).values_list("pk", "email"))
    local = {pk: _local(email) for pk, email in rows.items()}
    plain = {name for name, changed in local.values() if not changed}
    clash: set[str] = set()
    if plain:
        same = Q()
        for name in plain:
            same |= Q(email__istartswith=f"{name}@")
        others = users.filter(same, memberships__course_id=course_id).values_list(
            "email", flat=True
        )
        seen: dict[str, int] = {}
        for email in set(others) | set(rows.values()):
            name = _local(email)[0]
            seen[name] = seen.get(name, 0) + 1
        clash = {n for n, c in seen.items() if c > 1}
    return {
        pk: (name if not changed and name not in clash else f"{name}{pk}")[:32]
        for pk, (name, changed) in local.items()
    }
