"""The deployment the operator guide gives, tried where a proxy changes what the app sees:
Debian's nginx ending TLS with the shipped site file (deploy/nginx/courseops.conf) in front of
gunicorn run from the shipped unit (deploy/systemd/courseops-web.service), production settings,
PostgreSQL; a self-signed certificate made here (tests/edge.py).

Behind a proxy every request reaches gunicorn from 127.0.0.1 over plain HTTP. What a person or
an operator would notice if the app believed that: cookies sent without `Secure`, no HSTS, every
form refused by the CSRF check (or, worse, any origin accepted), a whole campus locked out by one
person's wrong passwords, `/metrics` open to anyone the proxy forwards, nginx's bare 413 page in
place of the form's own message, static files through Python. Each is checked here from two
client addresses on loopback (127.0.0.x: nginx sees them as two machines).

The full production crawl (tests/test_production_crawl.py) goes through the same nginx.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.conftest import _database_url
from tests.edge import (
    ROOT,
    Edge,
    collect_static,
    nginx_in_front,
    session_from,
    unit_command,
    wait_listening,
)
from tests.factories import CourseFactory, member
from tests.peers.run import free_port, stop

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.nginx,
    pytest.mark.timeout(300),
]
# Only the tests that write rows for gunicorn to read are transactional (each costs a flush).
writes_rows = pytest.mark.django_db(transaction=True)
PASSWORD = "proxy-Password-2026!"
TOKEN = "metrics-" + "t" * 40
PROMETHEUS = "127.0.0.3"  # METRICS_ALLOW_FROM below
STRANGER = "127.0.0.4"


@pytest.fixture(scope="module")
def front(django_db_setup, django_db_blocker) -> Iterator[Edge]:  # type: ignore[no-untyped-def]
    """gunicorn (the shipped unit, production settings, the test database) behind nginx (the
    shipped site file) for this module; each test writes its own rows."""
    work = Path(tempfile.mkdtemp(prefix="edge-"))
    web_port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": os.environ.get("CRAWL_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "SECRET_KEY": "behind-nginx-" + "s" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": "https://127.0.0.1",
        "AXES_PROXY_COUNT": "1",  # the guide's environment file behind nginx
        "METRICS_TOKEN": TOKEN,
        "METRICS_ALLOW_FROM": f"{PROMETHEUS}/32",
        # An address locks after 5 failures here (100 in the guide), so the test stays short;
        # the account limit stays 5, and each try below names another account.
        "COURSEOPS_IP_FAILURE_LIMIT": "5",
        "LOG_LEVEL": "WARNING",
    }
    collect_static(env)
    log = open(work / "web.log", "w+b")  # noqa: SIM115
    web = subprocess.Popen(
        [*unit_command("courseops-web.service", bind_port=web_port), "--workers", "2"],
        cwd=ROOT,
        env=env,
        stderr=log,
        start_new_session=True,
    )
    try:
        wait_listening(web_port, web, "gunicorn", work / "web.log")
        with nginx_in_front(web_port, work / "nginx") as edge:
            yield edge
    finally:
        stop(web, timeout=30)
        log.close()


@pytest.fixture
def person(settings):  # type: ignore[no-untyped-def]
    """An instructor of a new course, with a password the production hasher reads."""
    from django.contrib.auth.hashers import make_password

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    course = CourseFactory()
    user = member(course, role="instructor")
    user.password = make_password(PASSWORD)
    user.save(update_fields=["password"])
    return user, course


def _log_in(http: requests.Session, edge: Edge, email: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    http.get(f"{edge.base}/accounts/login/")
    return http.post(
        f"{edge.base}/accounts/login/",
        data={
            "username": email,
            "password": password,
            "csrfmiddlewaretoken": http.cookies.get("csrftoken", ""),
        },
        headers={"Origin": edge.base, "Referer": f"{edge.base}/accounts/login/"},
        allow_redirects=False,
    )


def _cookie_flags(response: requests.Response) -> dict[str, str]:
    """Each Set-Cookie's name → its attributes, lower-cased (`secure; httponly; samesite=lax`)."""
    raw = response.raw.headers.getlist("Set-Cookie")
    return {c.split("=", 1)[0]: "; ".join(p.strip().lower() for p in c.split(";")[1:]) for c in raw}


@writes_rows
def test_cookies_are_secure_and_every_answer_carries_hsts(front: Edge, person) -> None:  # type: ignore[no-untyped-def]
    user, _ = person
    http = session_from("127.0.0.1", front.ca)
    page = http.get(f"{front.base}/accounts/login/")
    assert page.status_code == 200
    assert "secure" in _cookie_flags(page)["csrftoken"].split("; ")
    assert page.headers["Strict-Transport-Security"].startswith("max-age=31536000")

    http.cookies.clear()
    http.get(f"{front.base}/accounts/login/")
    answer = _log_in(http, front, user.email)
    assert answer.status_code == 302, answer.text[:500]
    flags = _cookie_flags(answer)
    assert {"secure", "httponly"} <= set(flags["sessionid"].split("; ")), flags
    # The redirect after log-in stays on https (the app knows the scheme from nginx).
    assert not answer.headers["Location"].startswith("http://"), answer.headers["Location"]


def test_plain_http_is_sent_to_https(front: Edge) -> None:
    answer = requests.get(f"{front.http_base}/accounts/login/", allow_redirects=False, timeout=30)
    assert answer.status_code == 301
    assert answer.headers["Location"].startswith("https://"), answer.headers["Location"]


@writes_rows
def test_a_form_posted_from_the_site_passes_csrf_and_one_from_another_origin_is_refused(
    front: Edge, person
) -> None:  # type: ignore[no-untyped-def]
    user, _ = person
    foreign = session_from("127.0.0.1", front.ca)
    foreign.get(f"{front.base}/accounts/login/")
    refused = foreign.post(
        f"{front.base}/accounts/login/",
        data={
            "username": user.email,
            "password": PASSWORD,
            "csrfmiddlewaretoken": foreign.cookies.get("csrftoken", ""),
        },
        headers={"Origin": "https://courseops.attacker.example"},
        allow_redirects=False,
    )
    assert refused.status_code == 403, refused.status_code
    assert "sessionid" not in _cookie_flags(refused)

    same = session_from("127.0.0.1", front.ca)
    answer = _log_in(same, front, user.email)
    assert answer.status_code == 302, answer.text[:800]  # Origin https://127.0.0.1:<port> passes


@writes_rows
def test_the_lock_out_counts_the_client_address_nginx_forwarded(front: Edge, person) -> None:  # type: ignore[no-untyped-def]
    user, _ = person
    guesser = session_from("127.0.0.5", front.ca)
    # 5 wrong passwords, each for another account: only the address adds up (the fifth may
    # already be answered with the lock).
    tries = [
        _log_in(guesser, front, f"nobody{n}@uni.example", "wrong-password").status_code
        for n in range(5)
    ]
    assert tries[:4] == [200] * 4, tries
    locked = _log_in(guesser, front, user.email)
    assert locked.status_code == 429, locked.status_code
    assert "Too many failed log-in attempts" in locked.text

    # Another machine (as nginx sees it) is not locked: the same account, the right password.
    neighbour = session_from("127.0.0.6", front.ca)
    assert _log_in(neighbour, front, user.email).status_code == 302

    from axes.models import AccessAttempt

    addresses = set(AccessAttempt.objects.values_list("ip_address", flat=True))
    assert addresses == {"127.0.0.5"}, addresses  # never nginx's own 127.0.0.1


def test_metrics_allow_and_refuse_by_the_client_address(front: Edge) -> None:
    allowed = session_from(PROMETHEUS, front.ca).get(f"{front.base}/metrics")
    assert allowed.status_code == 200, allowed.status_code
    assert "django_http_requests" in allowed.text

    stranger = session_from(STRANGER, front.ca)
    assert stranger.get(f"{front.base}/metrics").status_code == 401
    # A forged X-Forwarded-For is kept by nginx, but only the entry nginx appended is believed.
    forged = stranger.get(f"{front.base}/metrics", headers={"X-Forwarded-For": PROMETHEUS})
    assert forged.status_code == 401
    with_token = stranger.get(f"{front.base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert with_token.status_code == 200


@writes_rows
def test_a_60_mb_upload_gets_the_forms_own_message(front: Edge, person) -> None:  # type: ignore[no-untyped-def]
    user, course = person
    http = session_from("127.0.0.7", front.ca)
    assert _log_in(http, front, user.email).status_code == 302
    page = f"{front.base}/c/{course.code}/roster/"
    assert http.get(page).status_code == 200
    big = b"email,name\n" + b"x" * (60 * 1000 * 1000)
    answer = http.post(
        page,
        data={"csrfmiddlewaretoken": http.cookies.get("csrftoken", "")},
        files={"file": ("roster.csv", big, "text/csv")},
        headers={"Referer": page},
        allow_redirects=False,
    )
    assert answer.status_code == 200, (answer.status_code, answer.text[:300])
    assert "413" not in answer.text
    assert "The file is larger than 5 MB." in answer.text


def test_past_nginxs_own_limit_the_too_large_page_is_the_apps(front: Edge) -> None:
    """A body over client_max_body_size never reaches the app: nginx answers 413 with
    static/too-large.html, not its own page. Sent by hand, headers only, so the answer comes
    before a single byte of the 70 MB body."""
    context = ssl.create_default_context(cafile=str(front.ca))
    with (
        socket.create_connection(("127.0.0.1", front.tls_port), timeout=30) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(
            f"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1:{front.tls_port}\r\n"
            "Content-Type: text/csv\r\nContent-Length: 70000000\r\nConnection: close\r\n\r\n".encode()
        )
        said = b""
        while b"</html>" not in said and (chunk := tls.recv(65536)):
            said += chunk
    text = said.decode(errors="replace")
    assert re.match(r"HTTP/1\.1 413 ", text), text[:200]
    assert "That file is too large" in text
    assert "<center>nginx" not in text


def test_static_files_are_served_by_nginx(front: Edge) -> None:
    http = session_from("127.0.0.1", front.ca)
    app_page = http.get(f"{front.base}/accounts/login/")
    css = re.search(r'href="(/static/css/courseops\.[0-9a-f]+\.css)"', app_page.text)
    assert css, "the log-in page links its hashed stylesheet"
    answer = http.get(front.base + css.group(1))
    assert answer.status_code == 200
    on_disk = ROOT / "staticfiles" / css.group(1).removeprefix("/static/")
    assert answer.content == on_disk.read_bytes()
    # nginx's own answer: a year's Expires and its HSTS, none of the headers Django's middleware
    # adds to everything gunicorn answers (WhiteNoise included).
    assert "Expires" in answer.headers
    assert answer.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert "Cross-Origin-Opener-Policy" in app_page.headers
    assert "Cross-Origin-Opener-Policy" not in answer.headers
