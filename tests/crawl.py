"""The production crawl's person and its rules, shared by the crawl of one host
(tests/test_production_crawl.py) and of the cluster (tests/cluster/test_cluster.py).

For the student, a student in no group, a TA and the instructor: log in through the log-in
form; open every HTML page of the URL configuration (found the way the phone test finds them);
fill and submit every form each page carries, as a person would (hidden values kept, empty
fields filled by their type, the first choice of a select, a small file for an upload); then
call every write operation of the OpenAPI schema once with a body made from its request schema.
No answer may be a 5xx, and every change must show its effect: a redirect, or a page or JSON
body that says what happened (a search form's GET only has to answer).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from tests.browser.test_phone import html_pages
from tests.world import World, build_world

PASSWORD = "crawl-Password-2026!"
ROLES = ("student_a", "student_solo", "ta", "instructor")
# Forms that end the session or leave the site; everything else is submitted.
SKIP_ACTIONS = ("/accounts/logout/", "/oidc/", "/saml2/", "/lti/")
FEEDBACK = re.compile(
    r'errorlist|role="alert"|class="[^"]*\b(messages|message|error|errors|notice|success)\b'
    r'|aria-invalid="true"',
)
# A role that did less than this did not really crawl (a log-in that failed, pages not found).
ENOUGH = {"pages": 20, "forms": 5, "operations": 50}


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


class Browser:
    """A person at the app over HTTPS through nginx: cookies kept by hand (sent to every path,
    as the browser would), CSRF token sent back with each form, the page's address as Referer
    (Django's CSRF check on HTTPS requires it)."""

    def __init__(self, base: str, verify: Any = True) -> None:
        self.base = base
        self.http = requests.Session()
        # A certificate to trust, or True (REQUESTS_CA_BUNDLE): given with each request, since a
        # session's own `verify` loses to the environment's bundle (requests' merge order).
        self.verify = verify
        self.jar: dict[str, str] = {}

    def request(self, method: str, url: str, **kw: Any) -> requests.Response:
        full = urljoin(self.base + "/", url)
        headers = {"Referer": full, **kw.pop("headers", {})}
        self.http.cookies.clear()
        r = self.http.request(
            method,
            full,
            cookies=self.jar,
            headers=headers,
            allow_redirects=False,
            verify=self.verify,
            **kw,
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
        assert r.status_code == 302, (email, r.status_code, sorted(self.jar), r.text[:500])


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


def crawl_forms(browser: Browser, email: str, pages: list[str]) -> Counter[str]:
    seen: Counter[str] = Counter()
    done: set[tuple[str, str, tuple[str, ...]]] = set()
    for path in pages:
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


def crawl_api(base: str, world: World, token: str, verify: Any = True) -> Counter[str]:
    seen: Counter[str] = Counter()
    http = requests.Session()
    http.headers["Authorization"] = f"Token {token}"
    schema = http.get(f"{base}/api/schema/", params={"format": "json"}, verify=verify).json()
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
            r = http.request(
                method.upper(), base + path, json=body, allow_redirects=False, verify=verify
            )
            seen["operations"] += 1
            seen[f"{r.status_code // 100}xx"] += 1
            assert r.status_code < 500, f"{method.upper()} {path} → {r.status_code}: {r.text[:800]}"
            assert _feedback(r), f"{method.upper()} {path} → {r.status_code} with an empty answer"
    return seen


def crawl_world(course: Any) -> tuple[World, dict[str, list[str]], dict[str, str]]:
    """The world the crawl walks, built on `course` (the live EE 290 demo): each role's password
    set to PASSWORD, its HTML pages, and an API token for each role. Returns (world, pages of
    each role, token of each role). Everything is written before any server starts, so a copy
    of the database (the cluster's) holds it."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from apps.core.tokens import token_create

    hasher = PBKDF2PasswordHasher()  # one production accepts; the test settings hash with MD5

    world = build_world(course)
    pages: dict[str, list[str]] = {}
    tokens: dict[str, str] = {}
    for role in ROLES:
        user = world.people[role]
        assert user is not None
        user.password = hasher.encode(PASSWORD, hasher.salt())
        user.save(update_fields=["password"])
        found = html_pages(world, role)
        assert len(found) >= ENOUGH["pages"], sorted(found)  # the walk found the app's pages
        pages[role] = sorted(set(found.values()))
        _, tokens[role] = token_create(user=user, name="production crawl")
    return world, pages, tokens


def crawl_role(
    base: str, world: World, role: str, pages: list[str], token: str, verify: Any = True
) -> tuple[Browser, Counter[str]]:
    """One role's whole crawl at `base`: log in, every form of its pages, every API write.
    Returns the logged-in browser and the counts."""
    user = world.people[role]
    assert user is not None
    browser = Browser(base, verify=verify)
    browser.log_in(user.email)
    seen = crawl_forms(browser, user.email, pages)
    seen += crawl_api(base, world, token, verify=verify)
    return browser, seen


def crawled_enough(totals: dict[str, Counter[str]]) -> None:
    """Each role submitted enough forms and made enough API writes to count as a crawl."""
    summary = "; ".join(f"{role}: {dict(c)}" for role, c in totals.items())
    for role in totals:
        for what in ("forms", "operations"):
            assert totals[role][what] >= ENOUGH[what], f"{role} {what}: {summary}"
