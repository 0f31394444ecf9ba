"""One spelling of an e-mail address, for every path that makes or matches an account.

The roster, the LMS, the campus sign-on and the admin each send addresses their own way:
`ProfB@Campus.example.edu`, ` profb@campus.example.edu.` and `profb@xn--campus-…` are one
mailbox. `canonical_email` trims, case-folds, drops the root dot of a fully qualified domain and
writes the domain in IDNA (ASCII) form, so each mailbox is one `User.email` and the unique index
on it holds for the person, not for a spelling. Accounts stored before this rule that now fold
to one address are never merged by guessing: migration 0012 leaves them as they were and the
course check "One account per e-mail" names them for staff.
"""

from __future__ import annotations

import contextlib


def canonical_email(raw: str) -> str:
    """The stored form of an address; an address without "@" is only trimmed and folded (the
    form validators say what is wrong with it)."""
    text = (raw or "").strip().casefold()
    local, at, domain = text.rpartition("@")
    if not at:
        return text
    domain = domain.rstrip(".")
    # Not a valid international name: kept as typed, and the form's validator refuses it.
    with contextlib.suppress(UnicodeError):
        domain = domain.encode("idna").decode("ascii")
    return f"{local}@{domain}"


def near_duplicates(pairs: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Groups of (id, stored e-mail) whose addresses fold to one canonical address."""
    by: dict[str, list[tuple[int, str]]] = {}
    for pk, email in pairs:
        by.setdefault(canonical_email(email), []).append((pk, email))
    return [sorted(v) for v in by.values() if len(v) > 1]
