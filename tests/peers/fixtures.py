"""Fixtures that start protocol peers (imported by tests/conftest.py for every test)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.peers.run import free_port, peer

PEOPLE = [
    # [campus username, password, e-mail the provider vouches for, last name]
    ["ada", "campus-pw", "ada@campus.example.edu", "Lovelace"],
    ["eve", "campus-pw", "eve@elsewhere.example.org", "Outsider"],
    ["uno", "campus-pw", "uno@campus.example.edu", "Unverified"],
    # Campus people on no course's roster (tests/sso/test_signon_limits.py).
    *[
        [f"stranger{i:02}", "campus-pw", f"stranger{i:02}@campus.example.edu", "Stranger"]
        for i in range(1, 21)
    ],
]


@dataclass
class Provider:
    base: str

    def rp_settings(self) -> dict[str, str]:
        return {
            "OIDC_RP_CLIENT_ID": "courseops",
            "OIDC_RP_CLIENT_SECRET": "op-secret",
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.base}/o/authorize/",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.base}/o/token/",
            "OIDC_OP_USER_ENDPOINT": f"{self.base}/o/userinfo/",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.base}/o/.well-known/jwks.json",
        }


@pytest.fixture(scope="session")
def oidc_process(live_server, tmp_path_factory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The OpenID provider's process, one per pytest worker (it migrates its own database and
    makes its people on start: seconds). It keeps nothing a test relies on between tests: each
    sign-on is a new authorization code for a browser or client session of that test's own."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with peer(
        "tests.peers.oidc_op.serve",
        [str(port), f"{live_server.url}/oidc/callback/"],
        f"{base}/o/.well-known/openid-configuration",
        {
            "OP_DATABASE": str(tmp_path_factory.mktemp("oidc-op") / "op.sqlite3"),
            "OP_PEOPLE": json.dumps(PEOPLE),
        },
    ):
        yield base


@pytest.fixture
def oidc_provider(oidc_process: str, settings) -> Provider:  # type: ignore[no-untyped-def]
    """django-oauth-toolkit's OpenID provider in its own process on 127.0.0.1 (the live server
    is `localhost`, so the two keep apart cookies), configured as the campus IdP."""
    provider = Provider(oidc_process)
    for key, value in provider.rp_settings().items():
        setattr(settings, key, value)
    return provider


@dataclass
class Platform:
    base: str
    roster_path: str = ""
    client_id: str = "courseops-client"

    def set_roster(self, context: str, members: list[dict[str, object]]) -> None:
        """The LMS course's members, as NRPS serves them (read by the platform on each call)."""
        from pathlib import Path

        path = Path(self.roster_path)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[context] = members
        path.write_text(json.dumps(data))

    def state(self) -> dict[str, object]:
        import requests

        return dict(requests.get(f"{self.base}/_state", timeout=10).json())

    def start_url(self, **spec: str) -> str:
        from urllib.parse import urlencode

        return f"{self.base}/start?{urlencode(spec)}"


@pytest.fixture
def lti_platform(live_server, tmp_path) -> Iterator[Platform]:  # type: ignore[no-untyped-def]
    """A test LMS in its own process on 127.0.0.1 that signs launches with its own key and
    serves its JWKS; registered with courseops as `manage.py lti_platform` would."""
    from django.core.management import call_command

    port = free_port()
    # `localhost`, like the live server: the same site, so the browser sends the tool's state
    # cookie on the platform's form post over plain HTTP (real LMSs are HTTPS, where the cookie
    # is SameSite=None). The platform sets no cookies of its own, so nothing clashes.
    base = f"http://localhost:{port}"
    platform = Platform(base, roster_path=str(tmp_path / "lms-roster.json"))
    with peer(
        "tests.peers.lti_platform.serve",
        [str(port)],
        f"{base}/ready",
        {
            "PLATFORM_ISSUER": base,
            "TOOL_LOGIN": f"{live_server.url}/lti/login/",
            "TOOL_LAUNCH": f"{live_server.url}/lti/launch/",
            "CLIENT_ID": platform.client_id,
            "TOOL_JWKS": f"{live_server.url}/lti/jwks/",
            "PLATFORM_ROSTER": platform.roster_path,
        },
    ):
        call_command(
            "lti_platform",
            "--title=Test LMS",
            f"--issuer={base}",
            f"--client-id={platform.client_id}",
            f"--login-url={base}/authorize",
            f"--token-url={base}/token",
            f"--jwks-url={base}/jwks",
            "--deployment=deployment-1",
            stdout=open(os.devnull, "w"),  # noqa: SIM115
        )
        yield platform


def _self_signed(directory: str, name: str) -> tuple[str, str]:
    """A key and a self-signed certificate (PEM files) for a test peer or the SP."""
    import datetime as dt
    from pathlib import Path

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    key_path, cert_path = Path(directory) / f"{name}.key", Path(directory) / f"{name}.crt"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(key_path), str(cert_path)


@dataclass
class IdP:
    base: str


SAML_PEOPLE = [
    ["ada", "campus-pw", "ada@campus.example.edu", "Ada Lovelace"],
    ["eve", "campus-pw", "eve@elsewhere.example.org", "Eve Outsider"],
    *[
        [f"stranger{i:02}", "campus-pw", f"stranger{i:02}@campus.example.edu", "A Stranger"]
        for i in range(1, 21)
    ],
]


@pytest.fixture
def saml_idp(live_server, settings, tmp_path) -> Iterator[IdP]:  # type: ignore[no-untyped-def]
    """pysaml2's IdP in its own process (on `localhost`, the live server's site, so the SP's
    SameSite=Lax request cookie comes back with the assertion over plain HTTP); courseops is
    configured as its SP, each side trusting the other's metadata."""
    import requests

    from apps.sso.saml_settings import build

    directory = str(tmp_path)
    sp_key, sp_cert = _self_signed(directory, "sp")
    _self_signed(directory, "idp")
    port = free_port()
    base = f"http://localhost:{port}"
    idp_xml = tmp_path / "idp.xml"
    settings.SAML_SESSION_COOKIE_SAMESITE = "Lax"  # plain HTTP: "None" needs Secure
    settings.SAML_CONFIG = build(
        base_url=live_server.url, metadata={"local": []}, key_file=sp_key, cert_file=sp_cert
    )
    sp_xml = requests.get(f"{live_server.url}/saml2/metadata/", timeout=10)
    assert sp_xml.status_code == 200, sp_xml.text[:300]
    (tmp_path / "sp.xml").write_bytes(sp_xml.content)
    with peer(
        "tests.peers.saml_idp.serve",
        [str(port)],
        f"{base}/metadata",
        {"IDP_DIR": directory, "IDP_PEOPLE": json.dumps(SAML_PEOPLE)},
    ):
        idp_xml.write_bytes(requests.get(f"{base}/metadata", timeout=10).content)
        settings.SAML_CONFIG = build(
            base_url=live_server.url,
            metadata={"local": [str(idp_xml)]},
            key_file=sp_key,
            cert_file=sp_cert,
        )
        yield IdP(base)


@dataclass
class ComputePeer:
    base: str
    project: str

    def _post(self, path: str, body: object) -> dict[str, object]:
        import requests

        r = requests.post(f"{self.base}{path}", json=body, timeout=10)
        r.raise_for_status()
        return dict(r.json())

    def seed(
        self,
        instances: list[dict[str, object]],
        addresses: list[dict[str, object]],
        *,
        project_metadata: list[dict[str, str]] | None = None,
        org_policies: tuple[str, ...] = ("custom.firewallRuleNamesItsTargets",),
    ) -> None:
        """A project with these instances and addresses. Its organisation enforces, by default,
        the custom constraint that a firewall rule names its targets (tests/peers/gce/policies.py)."""
        self._post(
            "/_seed",
            {
                "project": self.project,
                "instances": instances,
                "addresses": addresses,
                "project_metadata": project_metadata or [],
                "org_policies": list(org_policies),
            },
        )

    def timing(self, **seconds: float) -> None:
        """How long start/stop/suspend/resume take on the peer."""
        self._post("/_timing", seconds)

    def set_project(self, **change: object) -> None:
        """Change project metadata or organisation policies behind courseops's back."""
        self._post("/_set", change)

    def seed_from_board(self, course) -> None:  # type: ignore[no-untyped-def]
        """The project as the course file describes it: every node running, addresses free."""
        from apps.compute.models import Node, StaticIP

        self.seed(
            [
                {"name": n.name, "zone": n.zone, "internal_ip": n.internal_ip}
                for n in Node.objects.filter(course=course)
            ],
            [
                {"name": ip.resource_name, "region": ip.region, "address": ip.address}
                for ip in StaticIP.objects.filter(course=course)
            ],
        )

    def faults(self, **calls: list[object]) -> None:
        """Answers to inject, once each in order, per call name (serve.py's docstring)."""
        self._post("/_faults", calls)

    def change(self, instances: dict[str, object]) -> None:
        self._post("/_set", {"instances": instances})

    def state(self) -> dict[str, Any]:
        import requests

        return dict(requests.get(f"{self.base}/_state", timeout=10).json())

    def keys_on(self, name: str) -> list[str]:
        items = self.state()["instances"][name]["metadata"]["items"]
        value = next((i["value"] for i in items if i["key"] == "ssh-keys"), "")
        return sorted(line for line in value.splitlines() if line)

    def address_of(self, name: str) -> str | None:
        access = self.state()["instances"][name]["access"]
        return access["natIP"] if access else None


@pytest.fixture(scope="session")
def gce_process() -> Iterator[str]:
    """The Compute Engine peer's process, one per pytest worker: starting it imports the client
    library's message types (seconds of CPU), so the tests share it and each resets it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with peer("tests.peers.gce.serve", [str(port)], f"{base}/ready", {}):
        yield base


@pytest.fixture
def gce_peer(settings, gce_process: str) -> Iterator[ComputePeer]:  # type: ignore[no-untyped-def]
    """A local Compute Engine (tests/peers/gce) that the real google-cloud-compute client talks
    to over REST; courseops's provider is `gcp`, pointed at it with anonymous credentials. Each
    test starts with the peer reset: an empty project, no faults, no calls, default timings."""
    import requests

    base = gce_process
    requests.post(f"{base}/_reset", timeout=10).raise_for_status()
    settings.COMPUTE_PROVIDER = "gcp"
    settings.COMPUTE_ENDPOINT = base
    settings.COMPUTE_CALL_TIMEOUT_S = 2.0
    settings.COMPUTE_OP_BACKOFF_S = 0.2
    settings.COMPUTE_RATE_LIMIT_WAIT_S = 0.2
    os.environ["COMPUTE_PROVIDER"], os.environ["COMPUTE_ENDPOINT"] = "gcp", base
    try:
        yield ComputePeer(base, "ee290-sp26-compute")
    finally:
        os.environ.pop("COMPUTE_PROVIDER", None)
        os.environ.pop("COMPUTE_ENDPOINT", None)
