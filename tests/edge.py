"""The app served as the operator guide deploys it: Debian's nginx ending TLS in front of
gunicorn, both started from the files the guide includes (deploy/nginx/courseops.conf and the
units in deploy/systemd/), so the guide and the tests cannot drift.

The files are used as written, with only these changes, each one a whole line or word that must
be there (a file that lost one fails the test, rather than silently serving something else):

- the site file (`SITE_SUBSTITUTIONS`): the listen lines become loopback ports of the test (the
  IPv6 ones are dropped), `server_name` becomes 127.0.0.1, the certificate is the self-signed
  one this module makes, the upstream is the test's gunicorn port and the static root is this
  checkout's `staticfiles/`;
- a unit's `ExecStart` (`unit_command`): the virtualenv's path becomes this interpreter's, the
  bind address the test's port and beat's schedule file a temporary one; the test may append
  arguments (its log level, the term walk's clock hook), which override the unit's.

nginx runs in the foreground (`daemon off`) with its own prefix, pid file, logs and temporary
directories in a temporary directory, from a minimal main configuration (Debian's
/etc/nginx/nginx.conf is neither read nor changed) that includes the rendered site file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import ipaddress
import os
import pwd
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from tests.peers.run import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
NGINX = "/usr/sbin/nginx"
SITE = ROOT / "deploy" / "nginx" / "courseops.conf"
UNITS = ROOT / "deploy" / "systemd"
VENV_BIN = "/srv/courseops/.venv/bin/"


def _replace(text: str, old: str, new: str, where: str) -> str:
    if old not in text:
        raise AssertionError(f"{where} no longer has {old!r}: update tests/edge.py with it")
    return text.replace(old, new)


def render_site(*, tls_port: int, http_port: int, upstream_port: int, cert: Path, key: Path) -> str:
    """deploy/nginx/courseops.conf with the test's ports, certificate and static root."""
    text = SITE.read_text()
    for old, new in (
        ("listen 443 ssl;", f"listen 127.0.0.1:{tls_port} ssl;"),
        ("listen [::]:443 ssl;", ""),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("server_name courseops.example.edu;", "server_name 127.0.0.1;"),
        ("/etc/ssl/certs/courseops.example.edu.pem", str(cert)),
        ("/etc/ssl/private/courseops.example.edu.key", str(key)),
        ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};"),
        ("alias /srv/courseops/staticfiles/;", f"alias {ROOT / 'staticfiles'}/;"),
    ):
        text = _replace(text, old, new, str(SITE.relative_to(ROOT)))
    return text


def unit_command(
    unit: str, *, bind_port: int | None = None, schedule: Path | None = None
) -> list[str]:
    """The ExecStart of deploy/systemd/`unit`, run from this checkout's virtualenv."""
    path = UNITS / unit
    lines = [ln for ln in path.read_text().splitlines() if ln.startswith("ExecStart=")]
    assert len(lines) == 1, f"{path} has {len(lines)} ExecStart lines"
    line = _replace(lines[0].removeprefix("ExecStart="), VENV_BIN, f"{BIN}/", unit)
    if bind_port is not None:
        line = _replace(line, "--bind 127.0.0.1:8000", f"--bind 127.0.0.1:{bind_port}", unit)
    if schedule is not None:
        line = _replace(line, "/var/lib/courseops/celerybeat-schedule", str(schedule), unit)
    return shlex.split(line)


def certificate(work: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, made now (it is its own trust
    anchor: point REQUESTS_CA_BUNDLE at it). Returns (certificate, key) as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "courseops test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = work / "tls.pem", work / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def collect_static(env: dict[str, str]) -> None:
    """`collectstatic` into this checkout's STATIC_ROOT, one test process at a time (the crawl
    and the proxy tests may run at once on two pytest workers; both write the same folder)."""
    name = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    with (Path(tempfile.gettempdir()) / f"courseops-collectstatic-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", "collectstatic", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=False,
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, f"collectstatic failed: {done.stderr[-3000:]}"


def wait_listening(
    port: int, proc: subprocess.Popen[bytes], what: str, log: Path | None = None
) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = log.read_text()[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited ({proc.returncode}): {said}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on {port} within 60 s")


MAIN_CONF = """daemon off;
master_process on;
worker_processes 1;
{user}pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    access_log {work}/access.log;
    client_body_temp_path {work}/client_body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    include {work}/courseops.conf;
}}
"""


@dataclass
class Edge:
    """nginx in front of a gunicorn on `upstream_port`: `base` is its https address,
    `http_base` the plain-HTTP one (which only redirects), `ca` the certificate to trust."""

    base: str
    http_base: str
    ca: Path
    work: Path
    tls_port: int

    def log(self, name: str = "error.log") -> str:
        path = self.work / name
        return path.read_text() if path.exists() else ""


@contextlib.contextmanager
def nginx_in_front(upstream_port: int, work: Path) -> Iterator[Edge]:
    """Debian's nginx with the shipped site file, on two free loopback ports, proxying to
    gunicorn on `upstream_port`; stopped (with its worker) on exit."""
    work.mkdir(parents=True, exist_ok=True)
    cert, key = certificate(work)
    tls_port, http_port = free_port(), free_port()
    (work / "courseops.conf").write_text(
        render_site(
            tls_port=tls_port, http_port=http_port, upstream_port=upstream_port, cert=cert, key=key
        )
    )
    # As root, nginx's workers would drop to `nobody`, who may not read this checkout.
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(MAIN_CONF.format(work=work, user=user))
    test = subprocess.run(
        [
            NGINX,
            "-t",
            "-q",
            "-p",
            str(work),
            "-c",
            str(work / "nginx.conf"),
            "-e",
            str(work / "error.log"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert test.returncode == 0, f"nginx -t refused the site file: {test.stderr}"
    proc = subprocess.Popen(
        [NGINX, "-p", str(work), "-c", str(work / "nginx.conf"), "-e", str(work / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its worker is stopped with it (tests.peers.run.stop)
    )
    try:
        wait_listening(tls_port, proc, "nginx", work / "error.log")
        yield Edge(
            base=f"https://127.0.0.1:{tls_port}",
            http_base=f"http://127.0.0.1:{http_port}",
            ca=cert,
            work=work,
            tls_port=tls_port,
        )
    finally:
        stop(proc, timeout=10)


class _FromAddress(HTTPAdapter):
    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address: str, ca: Path) -> requests.Session:
    """A requests session whose connections leave from `address` (any of 127.0.0.0/8 on Linux):
    another client, as nginx sees it, on the same machine."""
    http = requests.Session()
    http.trust_env = False  # else REQUESTS_CA_BUNDLE from the environment replaces `verify`
    http.verify = str(ca)
    http.mount("https://", _FromAddress(address))
    http.mount("http://", _FromAddress(address))
    return http
