"""The login name each person gets on the course's nodes, for the SSH line, the access files and
the e-mails the board sends. The cloud puts the same names into each node's `ssh-keys`.

Under OS Login (`Node.os_login`, which the cloud records from the instance) `ssh-keys` is
ignored and the guest's account is the OS Login POSIX username of the person's Google identity
(their campus e-mail), so that is the name shown instead."""

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


def os_login_name(email: str) -> str:
    """The OS Login POSIX username of a Google identity: by default the e-mail's user name and
    domain joined, each character that is not a lowercase letter or digit made `_`
    (`jane.doe@university.edu` → `jane_doe_university_edu`), at most 32 characters
    (https://cloud.google.com/compute/docs/oslogin/manage-oslogin-in-an-org#modify-users;
    an administrator may set another one, which `gcloud compute os-login describe-profile`
    shows)."""
    return re.sub(r"[^a-z0-9]", "_", email.strip().lower())[:32]


def login_names(course_id: int, user_ids: Iterable[int], *, os_login: bool) -> dict[int, str]:
    """The name each person logs in with on a node: the OS Login username where OS Login is on
    for it, the course's login name (`unix_names`) otherwise."""
    if not os_login:
        return unix_names(course_id, user_ids)
    from django.contrib.auth import get_user_model

    rows = get_user_model().objects.filter(pk__in=list(user_ids)).values_list("pk", "email")
    return {pk: os_login_name(email) for pk, email in rows if email}
