"""SSH public keys a person adds on their profile, checked as OpenSSH reads them (the
`cryptography` library parses the key itself, not just its text): Ed25519, ECDSA (P-256/384/521)
and RSA of at least 3,072 bits; DSA and short RSA keys are refused with the reason. The
fingerprint is ssh-keygen's (SHA256, base64 without padding); one key belongs to one person. A
pasted private key (armoured, on one line, or its bare body) is named as such and never shown
back; a line with authorized_keys options (`command=`, `from=`) is refused saying so."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_ssh_public_key
from django.db import IntegrityError, transaction

from apps.compute.models import SshKey
from apps.core.errors import Conflict, DomainError, NotFound
from apps.core.models import User
from apps.core.services import audit_record

MAX_KEYS = 5
MIN_RSA_BITS = 3072
MAX_TEXT = 16_000
# A key type OpenSSH writes, then the base64 body: found after any authorized_keys options.
KEY_START = re.compile(r'(?:^|(?<=[\s,"]))((?:ssh|ecdsa|sk)-[\w@.-]+) (AAAA[0-9A-Za-z+/=]+)')
PRIVATE_MESSAGE = (
    "This is a private key — never paste it anywhere (and if you did elsewhere, make a new "
    "one). Paste the .pub file instead: the one line of ~/.ssh/id_ed25519.pub."
)


class PrivateKeyPasted(DomainError):
    """What was pasted is a private key: refused, and never echoed back into the form."""

    echo = False


def _is_private(text: str) -> bool:
    """A private key in any form people paste: PEM or OpenSSH armour (on one line or as `cat`
    prints it), PuTTY's .ppk, or the bare body of an OpenSSH private key (base64 of
    "openssh-key-v1")."""
    if "PRIVATE KEY" in text.upper() or text.lstrip().startswith("PuTTY-User-Key-File"):
        return True
    body = "".join(text.split())
    return body.startswith("b3BlbnNzaC1rZXktdjE")  # base64 of b"openssh-key-v1"


@dataclass(frozen=True)
class Parsed:
    kind: str
    bits: int
    fingerprint: str
    line: str  # type and body, the comment dropped
    comment: str


def parse(text: str) -> Parsed:
    """One OpenSSH public-key line → Parsed, or a DomainError saying what is wrong with it."""
    if _is_private(text[: MAX_TEXT * 2]):
        raise PrivateKeyPasted(PRIVATE_MESSAGE, field="key")
    line = " ".join(text.strip().split())
    if not line:
        raise DomainError(
            "Paste your public key (the one line in ~/.ssh/id_ed25519.pub).", field="key"
        )
    if len(line) > MAX_TEXT or "\n" in text.strip():
        raise DomainError(
            "Paste one key: a single line starting ssh-ed25519, ecdsa-… or ssh-rsa.", field="key"
        )
    found = KEY_START.search(line)
    if found is not None and found.start() > 0:
        # authorized_keys options (command="…", from="…", no-pty): refused, because courseops
        # gives node access itself — it writes the bare key to the node's ssh-keys metadata
        # for the group — and a forced command or a source restriction would shut the person
        # out of the shell the course's work needs, on a node they cannot log in to to fix it.
        options = line[: found.start()].strip()
        raise DomainError(
            f"This key line starts with authorized_keys options ({options[:60]}). courseops "
            "puts your key on the nodes itself and options such as command= or from= would "
            "shut you out of the node's shell, so they are not accepted: paste the line from "
            f"{found.group(1)} on (the .pub file as ssh-keygen wrote it).",
            field="key",
        )
    parts = line.split(" ")
    if len(parts) < 2:
        raise DomainError(
            "A public key has a type and a body, e.g. ssh-ed25519 AAAA….", field="key"
        )
    kind, body, comment = parts[0], parts[1], " ".join(parts[2:])
    try:
        blob = base64.b64decode(body, validate=True)
        key = load_ssh_public_key(f"{kind} {body}".encode("ascii"))
    except (ValueError, UnicodeError, TypeError) as exc:
        raise DomainError(f"This is not an OpenSSH public key ({exc}).", field="key") from None
    except Exception:  # cryptography raises its own UnsupportedAlgorithm for DSA and the like
        raise DomainError(
            f"{kind!r} keys are not accepted; use Ed25519 (ssh-keygen -t ed25519).", field="key"
        ) from None
    if isinstance(key, ed25519.Ed25519PublicKey):
        bits = 256
    elif isinstance(key, ec.EllipticCurvePublicKey):
        bits = key.curve.key_size
    elif isinstance(key, rsa.RSAPublicKey):
        bits = key.key_size
        if bits < MIN_RSA_BITS:
            raise DomainError(
                f"This RSA key has {bits} bits; at least {MIN_RSA_BITS:,} are needed. Make an "
                "Ed25519 key instead: ssh-keygen -t ed25519.",
                field="key",
            )
    else:
        raise DomainError(
            f"{kind!r} keys are not accepted; use Ed25519 (ssh-keygen -t ed25519).", field="key"
        )
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return Parsed(kind, bits, f"SHA256:{digest}", f"{kind} {body}", comment[:80])


def key_add(*, actor: User, text: str, label: str = "") -> SshKey:
    p = parse(text)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=actor.pk).first()  # one add at a time
        if SshKey.objects.filter(user=actor).count() >= MAX_KEYS:
            raise Conflict(f"You have {MAX_KEYS} keys; remove one you no longer use first.")
        mine = SshKey.objects.filter(fingerprint=p.fingerprint).first()
        if mine is not None:
            raise Conflict(
                "You added this key already."
                if mine.user_id == actor.pk
                else "This key belongs to another account; each person adds their own key.",
                field="key",
            )
        try:
            with transaction.atomic():
                k = SshKey.objects.create(
                    user=actor,
                    kind=p.kind,
                    bits=p.bits,
                    fingerprint=p.fingerprint,
                    public_key=p.line,
                    label=(label.strip() or p.comment)[:80],
                )
        except IntegrityError:
            raise Conflict("This key was just added; each key belongs to one account.") from None
        audit_record(
            actor=actor,
            action="ssh_key.added",
            obj=k,
            after={"fingerprint": k.fingerprint, "kind": k.kind, "bits": k.bits},
        )
    return k


def key_remove(*, actor: User, key_id: int) -> None:
    with transaction.atomic():
        k = SshKey.objects.select_for_update().filter(pk=key_id, user=actor).first()
        if k is None:
            raise NotFound("No such key of yours.")
        audit_record(
            actor=actor, action="ssh_key.removed", obj=k, before={"fingerprint": k.fingerprint}
        )
        k.delete()
