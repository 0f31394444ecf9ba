"""SSH public keys on a person's profile, checked as OpenSSH reads them: Ed25519, ECDSA and RSA
of 3,072 bits or more accepted with ssh-keygen's fingerprint; short RSA, DSA-like types, private
keys and junk refused with the reason; one key, one account; any pasted text answered, never a
500."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.compute.board.sshkeys import parse
from apps.compute.models import SshKey
from apps.core.errors import DomainError
from apps.core.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _line(key) -> str:  # type: ignore[no-untyped-def]
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )


def _fingerprint(line: str) -> str:
    blob = base64.b64decode(line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def test_accepted_kinds_carry_ssh_keygens_fingerprint() -> None:
    for key, kind, bits in (
        (ed25519.Ed25519PrivateKey.generate(), "ssh-ed25519", 256),
        (ec.generate_private_key(ec.SECP384R1()), "ecdsa-sha2-nistp384", 384),
        (rsa.generate_private_key(public_exponent=65537, key_size=3072), "ssh-rsa", 3072),
    ):
        line = _line(key)
        p = parse(f"{line} ada@laptop")
        assert (p.kind, p.bits, p.comment) == (kind, bits, "ada@laptop")
        assert p.fingerprint == _fingerprint(line)


def test_short_rsa_private_keys_and_junk_are_refused_with_the_reason() -> None:
    short = _line(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    for text, words in (
        (short, "2048 bits; at least 3,072"),
        ("-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjE=", "private key"),
        ("ssh-ed25519 not-base64!!", "not an OpenSSH public key"),
        ("ssh-dss AAAAB3NzaC1kc3MAAACBAP", "not"),
        ("", "Paste your public key"),
    ):
        with pytest.raises(DomainError, match=words):
            parse(text)


def test_the_page_adds_shows_the_fingerprint_refuses_another_accounts_key_and_removes() -> None:
    ada, bo = UserFactory(), UserFactory()
    line = _line(ed25519.Ed25519PrivateKey.generate())
    added = as_user(ada).post(
        "/accounts/ssh-keys/add/", {"key": line, "label": "laptop"}, follow=True
    )
    page = added.content.decode()
    assert _fingerprint(line) in page
    assert "laptop" in page
    taken = as_user(bo).post("/accounts/ssh-keys/add/", {"key": line}, follow=True).content.decode()
    assert "belongs to another account" in taken
    assert 'aria-invalid="true"' in taken
    again = as_user(ada).post(
        "/api/v1/me/ssh-keys/", {"key": line}, content_type="application/json"
    )
    assert again.status_code == 409
    key = SshKey.objects.get(user=ada)
    assert as_user(bo).post(f"/accounts/ssh-keys/{key.pk}/remove/").status_code == 302
    assert SshKey.objects.filter(pk=key.pk).exists()  # not bo's to remove
    as_user(ada).post(f"/accounts/ssh-keys/{key.pk}/remove/")
    assert not SshKey.objects.exists()


def test_the_api_lists_and_adds_with_the_fingerprint() -> None:
    ada = UserFactory()
    line = _line(ec.generate_private_key(ec.SECP256R1()))
    made = as_user(ada).post(
        "/api/v1/me/ssh-keys/", {"key": line, "name": "desktop"}, content_type="application/json"
    )
    assert made.status_code == 201, made.content
    assert made.json()["fingerprint"] == _fingerprint(line)
    assert [k["label"] for k in as_user(ada).get("/api/v1/me/ssh-keys/").json()] == ["desktop"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.binary(max_size=200).map(lambda b: "ssh-ed25519 " + base64.b64encode(b).decode()),
        st.binary(max_size=200).map(lambda b: "ssh-rsa " + base64.b64encode(b).decode()),
    )
)
def test_any_pasted_text_gets_an_answer_never_a_500(text: str) -> None:
    ada = User.objects.filter(email="fuzz@uni.edu").first() or UserFactory(email="fuzz@uni.edu")
    answer = as_user(ada).post("/accounts/ssh-keys/add/", {"key": text})
    assert answer.status_code in {302, 400}  # 400: the text guard refuses control characters
    api = as_user(ada).post(
        "/api/v1/me/ssh-keys/", {"key": text or "x"}, content_type="application/json"
    )
    assert api.status_code in {201, 400, 409}


def _private_text(key) -> str:  # type: ignore[no-untyped-def]
    """The private key as `cat ~/.ssh/id_ed25519` prints it."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()


def test_a_key_with_authorized_keys_options_is_refused_saying_so() -> None:
    line = _line(ed25519.Ed25519PrivateKey.generate())
    for prefix in ('command="/usr/bin/rsync --server",no-pty ', 'from="10.0.0.0/8" '):
        with pytest.raises(DomainError, match="authorized_keys options") as refused:
            parse(prefix + line + " ada@laptop")
        assert "not an OpenSSH public key" not in refused.value.message
        assert "paste the line from ssh-ed25519 on" in refused.value.message
    assert parse(line + " ada@laptop").comment == "ada@laptop"  # the same key, bare: accepted


def test_a_pasted_private_key_is_named_and_never_shown_back() -> None:
    ada = UserFactory()
    private = _private_text(ed25519.Ed25519PrivateKey.generate())
    body = "".join(private.splitlines()[1:-1])
    rsa_pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=3072)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        .decode()
    )
    for text in (private, " ".join(private.split()), body, rsa_pem, private.replace("\n", "\r\n")):
        with pytest.raises(DomainError, match="This is a private key — never paste it"):
            parse(text)
        page = as_user(ada).post("/accounts/ssh-keys/add/", {"key": text}, follow=True)
        html = page.content.decode()
        assert "This is a private key" in html
        assert body[20:60] not in html  # not echoed into the text box (nor anywhere)
        assert 'aria-invalid="true"' in html
    assert not SshKey.objects.exists()
