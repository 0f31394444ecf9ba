"""Every form and every API write, over HTTPS, against the app as it ships: Debian's nginx
ending TLS in front of gunicorn with the production settings on PostgreSQL, a real Celery worker
and beat on Redis, e-mail to an SMTP server on loopback — not the test client inside the test's
transaction. nginx runs the site file and gunicorn, the worker and beat the systemd units that
the operator guide includes (deploy/, read by tests/edge.py).

For the student, a TA and the instructor: log in through the log-in form; open every HTML page
of the URL configuration (found the way the phone test finds them); fill and submit every form
each page carries, as a person would (hidden values kept, empty fields filled by their type, the
first choice of a select, a small file for an upload); then call every write operation of the
OpenAPI schema once with a body made from its request schema. No answer may be a 5xx, and every
change must show its effect: a redirect, or a page or JSON body that says what happened (a
search form's GET only has to answer).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from aiosmtpd.controller import Controller

from tests.browser.test_phone import html_pages
from tests.conftest import _database_url
from tests.edge import collect_static, nginx_in_front, unit_command, wait_listening
from tests.peers.run import free_port, stop
from tests.termwalk import clock_hooks, walk_the_term
from tests.world import World, build_world

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.browser,  # the term walk's axe scans (tests.termwalk)
    pytest.mark.nginx,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(2400),
]
ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PASSWORD = "crawl-Password-2026!"
ROLES = ("student_a", "student_solo", "ta", "instructor")
# Forms that end the session or leave the site; everything else is submitted.
SKIP_ACTIONS = ("/accounts/logout/", "/oidc/", "/saml2/", "/lti/")
FEEDBACK = re.compile(
    r'errorlist|role="alert"|class="[^"]*\b(messages|message|error|errors|notice|success)\b'
    r'|aria-invalid="true"',
)


class Forms(HTMLParser):
    """The forms of a page: action, method, and their controls in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict[str, Any]] = []
        self._form: dict[str, Any] | None = None
        self._select: dict[str, Any] | None = None
        self._textarea: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._form = {
                "action": a.get("action", ""),
                "method": a.get("method", "get").lower(),
                "enctype": a.get("enctype", ""),
                "controls": [],
            }
            self.forms.append(self._form)
        elif self._form is None:
            return
        elif tag in {"input", "button"} and a.get("name"):
            kind = a.get("type", "text" if tag == "input" else "submit").lower()
            self._form["controls"].append({**a, "tag": tag, "type": kind})
        elif tag == "select" and a.get("name"):
            self._select = {**a, "tag": "select", "options": [], "selected": None}
            self._form["controls"].append(self._select)
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            self._select["options"].append(value)
            if "selected" in a:
                self._select["selected"] = value
        elif tag == "textarea" and a.get("name"):
            self._textarea = {**a, "tag": "textarea", "text": ""}
            self._form["controls"].append(self._textarea)

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._textarea["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def _by_type(control: dict[str, Any]) -> str:
    """What a person types into an empty field of this kind."""
    kind = control.get("type", "text")
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    if kind == "number":
        low = control.get("min") or "1"
        return low if low not in {"", "0"} else "1"
    if kind == "date":
        return soon.date().isoformat()
    if kind == "datetime-local":
        return soon.strftime("%Y-%m-%dT10:00")
    if kind == "time":
        return "10:00"
    if kind == "email":
        return "student02@example.edu"
    if kind == "url":
        return "https://github.com/example/repo"
    return "Checked by the production crawl: a sentence long enough for any reason field."


def fill(form: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """(fields, files) a person would send: what the page set, empty fields filled."""
    data: dict[str, str] = {}
    files: dict[str, Any] = {}
    radios: set[str] = set()
    pressed = False
    for c in form["controls"]:
        name, kind = c["name"], c.get("type", "")
        if c["tag"] == "select":
            options = [o for o in c["options"] if o]
            chosen = c["selected"] if c["selected"] is not None else (options or [""])[0]
            data.setdefault(name, chosen)
        elif c["tag"] == "textarea":
            data.setdefault(name, c["text"].strip() or _by_type({"type": "text"}))
        elif kind in {"submit", "button", "image"}:
            if not pressed and kind == "submit":
                data[name] = c.get("value", "")
                pressed = True
        elif kind == "checkbox":
            if "checked" in c:
                data[name] = c.get("value", "on")
        elif kind == "radio":
            if name not in radios and ("checked" in c or name not in data):
                data[name] = c.get("value", "on")
                if "checked" in c:
                    radios.add(name)
        elif kind == "file":
            files[name] = ("crawl.csv", b"email,q1\nnobody@example.edu,1\n", "text/csv")
        elif kind == "hidden" or c.get("value"):
            data.setdefault(name, c.get("value", ""))
        else:
            data.setdefault(name, _by_type(c))
    return data, files


class Inbox:
    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        self.count += len(envelope.rcpt_tos)
        return "250 OK"


@pytest.fixture
def stack(ee290_live, settings):  # type: ignore[no-untyped-def]
    """The demo world served as production serves it, its processes following a clock the term
    walk steps (tests.termwalk); yields (base URL, world, inbox, logs, origin, clock): the base
    URL is nginx's https address, the origin gunicorn's own (plain HTTP on loopback)."""
    clock, env, web_args = clock_hooks()
    for served in serve(ee290_live, settings, env_extra=env, web_extra=web_args):
        yield (*served, clock)


def serve(  # type: ignore[no-untyped-def]
    course, settings, *, env_extra: dict[str, str] | None = None, web_extra: str = ""
):
    """Build the world on `course` and serve it as production does (nginx with TLS in front of
    gunicorn, worker, beat, SMTP sink); yields (https base URL, world, inbox, logs, gunicorn's
    own URL). `env_extra`
    is added to the processes' environment and `web_extra` to gunicorn's command line (the term
    crawl's clock). While it serves, REQUESTS_CA_BUNDLE names the test's self-signed
    certificate, so every requests call of the crawl verifies nginx's certificate."""
    from django.contrib.auth.hashers import make_password

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    world = build_world(course)
    for role in ROLES:
        user = world.people[role]
        assert user is not None
        user.password = make_password(PASSWORD)
        user.save(update_fields=["password"])

    inbox = Inbox()
    smtp_port, web_port = free_port(), free_port()
    work = Path(tempfile.mkdtemp(prefix="crawl-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "courseops.settings.production",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": os.environ.get("CRAWL_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "SECRET_KEY": "production-crawl-" + "s" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "AXES_PROXY_COUNT": "1",  # nginx in front (docs/operators.md, "Behind nginx")
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "EMAIL_USE_TLS": "false",
        "LOG_LEVEL": "WARNING",
        "SITE_URL": "https://127.0.0.1",  # nginx's address with its port, once it listens
        **(env_extra or {}),
    }
    collect_static(env)
    redis_db = urlsplit(env["REDIS_URL"]).path.strip("/") or "0"
    subprocess.run(["redis-cli", "-n", redis_db, "flushdb"], check=False, capture_output=True)
    # The units the operator guide gives (deploy/systemd/), with the test's log level; the
    # worker on one process, as before nginx joined (the two cores are shared with the rest).
    commands = {
        "web": [
            *unit_command("courseops-web.service", bind_port=web_port),
            *f"--log-level warning {web_extra}".split(),
        ],
        "worker": [
            *unit_command("courseops-worker.service"),
            "--concurrency=1",
            "--loglevel=WARNING",
        ],
        "beat": [
            *unit_command("courseops-beat.service", schedule=work / "beat-schedule"),
            "--loglevel=WARNING",
        ],
    }
    trusted = os.environ.get("REQUESTS_CA_BUNDLE")
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        with nginx_in_front(web_port, work / "nginx") as front:
            env["SITE_URL"] = front.base
            logs = {name: open(work / f"{name}.log", "w+b") for name in commands}  # noqa: SIM115
            for name, words in commands.items():
                procs[name] = subprocess.Popen(
                    words,
                    cwd=ROOT,
                    env=env,
                    stderr=logs[name],
                    start_new_session=True,  # stopped with every process it forks (stop())
                )
            os.environ["REQUESTS_CA_BUNDLE"] = str(front.ca)
            wait_listening(web_port, procs["web"], "gunicorn", work / "web.log")
            yield front.base, world, inbox, logs, f"http://127.0.0.1:{web_port}"
    finally:
        if trusted is None:
            os.environ.pop("REQUESTS_CA_BUNDLE", None)
        else:
            os.environ["REQUESTS_CA_BUNDLE"] = trusted
        for proc in procs.values():
            proc.terminate()  # all at once: each stops while the others do
        for proc in procs.values():
            stop(proc, timeout=30)
        smtp.stop()


class Browser:
    """A person at the app over HTTPS through nginx: cookies kept by hand (sent to every path,
    as the browser would), CSRF token sent back with each form, the page's address as Referer
    (Django's CSRF check on HTTPS requires it)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = requests.Session()
        self.jar: dict[str, str] = {}

    def request(self, method: str, url: str, **kw: Any) -> requests.Response:
        full = urljoin(self.base + "/", url)
        headers = {"Referer": full, **kw.pop("headers", {})}
        self.http.cookies.clear()
        r = self.http.request(
            method, full, cookies=self.jar, headers=headers, allow_redirects=False, **kw
        )
        self.jar.update({c.name: c.value or "" for c in r.cookies})
        return r

    def log_in(self, email: str) -> None:
        self.request("GET", "/accounts/login/")
        r = self.request(
            "POST",
            "/accounts/login/",
            data={
                "username": email,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.jar.get("csrftoken", ""),
            },
        )
        assert r.status_code == 302, (email, r.status_code, r.text[:500])


def _main_text(html: str) -> str:
    """The words of a page's <main>, tags and the per-request CSRF token left out."""
    start, end = html.find("<main"), html.rfind("</main>")
    body = html[start:end] if start >= 0 and end > start else html
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _feedback(r: requests.Response, before: str = "") -> bool:
    """The answer tells the person what happened: a redirect, an error or message, or a page
    whose content is not the page the form was on, unchanged."""
    if 300 <= r.status_code < 400 or r.status_code == 204:
        return True
    kind = r.headers.get("Content-Type", "")
    if "json" in kind:
        return bool(r.content)
    if "html" in kind:
        return bool(FEEDBACK.search(r.text)) or _main_text(r.text) != _main_text(before)
    return bool(r.content)  # a file: CSV, iCal, a download


def crawl_forms(browser: Browser, email: str, pages: dict[str, str]) -> Counter[str]:
    seen: Counter[str] = Counter()
    done: set[tuple[str, str, tuple[str, ...]]] = set()
    for path in sorted(set(pages.values())):
        r = browser.request("GET", path)
        if r.status_code in {301, 302} and "/accounts/login/" in r.headers.get("Location", ""):
            browser.log_in(email)
            r = browser.request("GET", path)
        assert r.status_code < 500, f"GET {path} → {r.status_code}"
        seen["pages"] += 1
        if "html" not in r.headers.get("Content-Type", ""):
            continue
        parser = Forms()
        parser.feed(r.text)
        for form in parser.forms:
            action = urljoin(path, form["action"] or path)
            if urlsplit(action).netloc or action.startswith(SKIP_ACTIONS):
                continue
            fields, files = fill(form)
            key = (form["method"], urlsplit(action).path, tuple(sorted(fields)))
            if key in done:
                continue  # the same form on another page
            done.add(key)
            fields["csrfmiddlewaretoken"] = browser.jar.get("csrftoken", "")
            if form["method"] == "post":
                answer = browser.request("POST", action, data=fields, files=files or None)
            else:
                answer = browser.request("GET", action, params=fields)
            seen[f"{form['method']} {answer.status_code // 100}xx"] += 1
            seen["forms"] += 1
            assert answer.status_code < 500, (
                f"{form['method'].upper()} {action} from {path} → {answer.status_code}: "
                f"{fields}\n{answer.text[:800]}"
            )
            assert form["method"] == "get" or _feedback(answer, r.text), (
                f"{form['method'].upper()} {action} from {path} → {answer.status_code} "
                "with nothing said about what happened"
            )
            if "/accounts/login/" in answer.headers.get("Location", ""):
                browser.log_in(email)
    return seen


def _sample(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """A value valid by `schema` (the first enum choice, required properties only)."""
    if "$ref" in schema:
        return _sample(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    for combo in ("allOf", "oneOf", "anyOf"):
        if combo in schema:
            return _sample(schema[combo][0], components)
    if "enum" in schema:
        return next((v for v in schema["enum"] if v not in {None, ""}), None)
    kind = schema.get("type", "object")
    fmt = schema.get("format", "")
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    if kind == "object":
        props = schema.get("properties", {})
        return {
            k: _sample(v, components)
            for k, v in props.items()
            if k in schema.get("required", []) and not v.get("readOnly")
        }
    if kind == "array":
        return [_sample(schema.get("items", {}), components)] if schema.get("minItems") else []
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return max(1.0, float(schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if fmt == "date-time":
        return soon.isoformat()
    if fmt == "date":
        return soon.date().isoformat()
    if fmt == "email":
        return "student02@example.edu"
    if fmt == "uri":
        return "https://github.com/example/repo"
    return "Checked by the production crawl, a sentence long enough."


def crawl_api(base: str, world: World, token: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    http = requests.Session()
    http.headers["Authorization"] = f"Token {token}"
    schema = http.get(f"{base}/api/schema/", params={"format": "json"}).json()
    components = schema.get("components", {}).get("schemas", {})
    ids = {**world.ids}
    for route, item in sorted(schema["paths"].items()):
        for method in ("post", "put", "patch", "delete"):
            op = item.get(method)
            if op is None or route.startswith("/api/v1/auth/"):
                continue  # the token endpoints: crawled by test_api, they end this session

            def value(name: str) -> str:
                return str(ids.get(name, ids.get("code") if name == "code" else 1))

            path = re.sub(r"\{(\w+)\}", lambda m: value(m.group(1)), route)
            content = op.get("requestBody", {}).get("content", {})
            body = None
            if "application/json" in content:
                body = _sample(content["application/json"].get("schema", {}), components)
            r = http.request(method.upper(), base + path, json=body, allow_redirects=False)
            seen["operations"] += 1
            seen[f"{r.status_code // 100}xx"] += 1
            assert r.status_code < 500, f"{method.upper()} {path} → {r.status_code}: {r.text[:800]}"
            assert _feedback(r), f"{method.upper()} {path} → {r.status_code} with an empty answer"
    return seen


def test_every_form_and_api_write_against_the_production_stack(stack) -> None:  # type: ignore[no-untyped-def]
    from apps.core.tokens import token_create

    base, world, inbox, logs, origin, clock = stack
    started = time.monotonic()
    totals: dict[str, Counter[str]] = {}
    pages_of: dict[str, list[str]] = {}
    browsers: dict[str, Browser] = {}
    for role in ROLES:
        user = world.people[role]
        pages = html_pages(world, role)
        assert len(pages) >= 20, sorted(pages)  # the walk really found the app's pages
        pages_of[role] = list(pages.values())
        browser = browsers[role] = Browser(base)
        browser.log_in(user.email)
        totals[role] = crawl_forms(browser, user.email, pages)
        _, key = token_create(user=user, name="production crawl")
        totals[role] += crawl_api(base, world, key)
    forms_s = time.monotonic() - started
    # Then the term (tests.termwalk): every shipped set graded, released, regraded and hidden,
    # every week of the calendar stepped through, every page and API read at each step.
    term = _in_own_thread(walk_the_term, base, world, clock, browsers, pages_of, origin)
    summary = "; ".join(f"{role}: {dict(c)}" for role, c in totals.items())
    report = (
        f"production crawl through nginx + TLS at {base} (forms and writes {forms_s:.0f} s) — "
        f"{summary}; e-mails delivered to the SMTP server: {inbox.count}\n{term}"
    )
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "production-crawl.txt").write_text(report + "\n")
    sys.stdout.write("\n" + report + "\n")
    for role in ROLES:
        assert totals[role]["forms"] >= 5, summary
        assert totals[role]["operations"] >= 50, summary
    logs["web"].seek(0)
    assert b"Internal Server Error" not in logs["web"].read()  # Django's line for every 500
    logs["worker"].seek(0)
    worker_log = logs["worker"].read().decode()
    assert "NotRegistered" not in worker_log
    assert "raised unexpected" not in worker_log, worker_log[-3000:]  # a task that crashed


def _in_own_thread(fn, *args):  # type: ignore[no-untyped-def]
    """Run `fn` in a thread of its own and return its result. Playwright's sync API refuses to
    start in a thread whose asyncio loop is running, and under `--dist loadfile` this worker may
    already hold the browser tests' session-wide Playwright; a new thread has no loop. The
    thread's database connection is closed before it ends, so the test's teardown can flush."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    def run():  # type: ignore[no-untyped-def]
        try:
            return fn(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
