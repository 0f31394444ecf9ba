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
import unicodedata

import idna


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


class EmailRefused(ValueError):
    """An address no first link may take; the message says why, for the person."""


# Unicode's "Highly Restrictive" level (UTS #39, section 5.2, https://www.unicode.org/reports/
# tr39/#Restriction_Level_Detection): one script, or Latin with the scripts East Asian names are
# written in (Han with Hiragana and Katakana, with Bopomofo, or with Hangul). Japanese mixes Han,
# Hiragana and Katakana, so they count as one here.
_SCRIPT_FAMILY = {"CJK": "HAN", "HIRAGANA": "HAN", "KATAKANA": "HAN"}
_MIXES_ALLOWED = (
    frozenset({"LATIN", "HAN"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def _script(ch: str) -> str:
    """A letter's script, from its Unicode name ("LATIN SMALL LETTER A" → LATIN); "" for what
    belongs to every script (digits, punctuation, combining marks)."""
    if not unicodedata.category(ch).startswith("L"):
        return ""
    first = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
    return _SCRIPT_FAMILY.get(first, first)


def first_link_email(raw: str) -> str:
    """The one e-mail rule of every first link by address (LTI, OIDC, SAML): the address
    NFKC-normalised (a full-width "ｐ" is "p") and in its stored form (`canonical_email`), or
    `EmailRefused` when it is no address to link anybody by: invisible or control characters,
    a domain label that is not valid IDNA 2008 (an `xn--` label that does not decode), or
    letters of more than one script anywhere in it (a Cyrillic "е" in a Latin domain)."""
    text = unicodedata.normalize("NFKC", (raw or "").strip())
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain:
        raise EmailRefused(f"{raw!r} is not an e-mail address.")
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise EmailRefused(f"{raw!r} contains invisible or control characters.")
    labels = domain.rstrip(".").casefold().split(".")
    shown = []
    for label in labels:
        try:
            if label.lower().startswith("xn--"):
                shown.append(idna.decode(label))
            else:
                idna.encode(label)
                shown.append(label)
        except (idna.IDNAError, UnicodeError):
            raise EmailRefused(
                f"The domain of {raw!r} is not a valid internationalised name ({label!r})."
            ) from None
    scripts = {_script(ch) for ch in local + "".join(shown)} - {""}
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _MIXES_ALLOWED):
        names = " and ".join(sorted(s.title() for s in scripts))
        raise EmailRefused(
            f"{raw!r} mixes letters of different scripts ({names}), as look-alike addresses do."
        )
    return canonical_email(text)
