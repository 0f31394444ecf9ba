"""The production crawl walks the term: every state a course reaches, read by every role.

Run by tests/test_production_crawl.py on the app as it ships (nginx with TLS, gunicorn with the
production settings on PostgreSQL, a Celery worker and beat on Redis, an SMTP sink); the form
and write crawl of the same world runs across the cluster (tests/cluster/test_cluster.py). On
it:

1. **Every question set the course ships** (each bank of courses/banks/, the lab's included) is
   graded, released, graded again and hidden by the instructor over the API, as staff do; after
   each of those four steps every page and every API read of a student, a TA and the
   instructor is opened.
2. **The term's clock is stepped** through every week, from the week before the first lecture
   to the week after the last dated row (lectures, releases, deadlines, milestones, lab windows,
   checkoff sessions, peer-review rounds, check-in windows all keep the dates they have), and
   at each step the same reads are crawled again.

How time moves, and why this way: the *server processes'* clock is moved, not the data. Each
process of the stack starts with a `sitecustomize` module that exists only in a temporary
directory this test puts on their PYTHONPATH; it follows a clock file with time-machine (the
project's time-freezing library) — gunicorn re-reads it before each request (a `pre_request`
hook in a gunicorn config file, also only in that directory), the worker before each task.
Nothing in the application knows about it: no setting, no environment variable read by
production code. Moving the data instead (`move_term`, as `load_demo` does) shifts only the
calendar's tables, so checkoff slots, review rounds and check-in windows would drift away from
the lectures they belong to — a state no real course reaches. Beat keeps the clock it started
with (it only queues reminders, which the worker then runs at the stepped time).

What is read, and the sampling that keeps CI time sane (each state costs a few hundred
requests): in each of the four set states and in every week, every HTML page of the student,
the TA and the instructor (the phone walk's pages); every API GET of the schema for all three
roles in the set states and for the student every week, for the staff every other week (their
API reads are reports over the same rows their pages show). The three roles read at once, one
thread each, as three people would. Axe (WCAG 2.1 A/AA, the accessibility test's rules) runs
in Chromium against the same server at 1280 px: in each set state every question page of the
student and the instructor; over the weeks a rotating slice of each role's pages, so every
page is scanned in some week and every week scans some pages (390 px and every menu state stay
with tests/browser/test_accessibility.py). Counts go to test-artifacts/term-crawl.txt.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import requests

from tests.browser.test_accessibility import WCAG
from tests.world import World

ROOT = Path(__file__).resolve().parents[1]

READERS = ("student_a", "ta", "instructor")

# Loaded by every Python process of the stack (their PYTHONPATH starts with the directory this
# is written to), never by the application: the clock the crawl steps.
SITECUSTOMIZE = '''
import os

_PATH = os.environ.get("TERM_CRAWL_CLOCK")
_state = {"at": None, "trip": None}


def follow_clock(*_args, **_kwargs):
    """Travel to the instant in the clock file (epoch seconds), ticking; real time if empty."""
    if not _PATH:
        return
    try:
        with open(_PATH) as f:
            at = f.read().strip()
    except OSError:
        at = ""
    if at == _state["at"]:
        return
    import time_machine

    if _state["trip"] is not None:
        _state["trip"].stop()
        _state["trip"] = None
    if at:
        _state["trip"] = time_machine.travel(float(at), tick=True)
        _state["trip"].start()
    _state["at"] = at


if _PATH:
    follow_clock()
    try:
        from celery.signals import task_prerun

        task_prerun.connect(follow_clock, weak=False)
    except ImportError:
        pass
'''
GUNICORN_CONFIG = """
import sitecustomize


def pre_request(worker, req):
    sitecustomize.follow_clock()
"""


class Clock:
    """The stack's clock: an instant written to the file every process follows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.write_text("")

    def set(self, at: dt.datetime | None) -> None:
        self.path.write_text("" if at is None else repr(at.timestamp()))


def clock_hooks() -> tuple[Clock, dict[str, str], str]:
    """The clock every process of the stack follows: (clock, environment to add, gunicorn
    arguments). Written to a temporary directory; the clock starts empty (real time)."""
    hooks = Path(tempfile.mkdtemp(prefix="term-clock-"))
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (hooks / "gunicorn_clock.py").write_text(GUNICORN_CONFIG)
    clock = Clock(hooks / "clock")
    env = {"PYTHONPATH": f"{hooks}:{ROOT}", "TERM_CRAWL_CLOCK": str(clock.path)}
    return clock, env, f"-c {hooks / 'gunicorn_clock.py'}"


def api_reads(base: str, world: World) -> list[str]:
    """Every GET of the OpenAPI schema, with group A's ids (those of the world)."""
    schema = requests.get(f"{base}/api/schema/", params={"format": "json"}, timeout=60).json()
    out = []
    for route, item in sorted(schema["paths"].items()):
        if "get" not in item or route.startswith("/api/v1/auth/"):
            continue
        out.append(
            re.sub(r"\{(\w+)\}", lambda m: str(world.ids.get(m.group(1), 1)), route),
        )
    return out


class Reader:
    """One role's browser session and API token on the stack."""

    def __init__(self, base: str, world: World, role: str, browser: Any, pages: list[str]) -> None:
        from apps.core.tokens import token_create

        self.role = role
        self.user = world.people[role]
        assert self.user is not None
        self.browser = browser
        self.browser.log_in(self.user.email)
        self.pages = sorted(set(pages))
        self.api = requests.Session()
        self.api.headers["Authorization"] = f"Token {token_create(user=self.user, name='term')[1]}"
        self.base = base

    def page(self, path: str) -> requests.Response:
        r = self.browser.request("GET", path)
        if r.status_code in {301, 302} and "/accounts/login/" in r.headers.get("Location", ""):
            self.browser.log_in(self.user.email)  # the session ended at the stepped clock
            r = self.browser.request("GET", path)
        return r


def _read_all(reader: Reader, reads: list[str], state: str) -> tuple[Counter[str], list[str]]:
    seen: Counter[str] = Counter()
    failed = []
    for path in reader.pages:
        r = reader.page(path)
        seen["page reads"] += 1
        if r.status_code >= 500:
            failed.append(f"[{state}] {reader.role} GET {path} → {r.status_code}")
    for path in reads:
        r = reader.api.get(reader.base + path, allow_redirects=False, timeout=60)
        seen["api reads"] += 1
        if r.status_code >= 500:
            failed.append(f"[{state}] {reader.role} GET {path} → {r.status_code}: {r.text[:300]}")
    return seen, failed


def crawl_reads(
    readers: list[Reader], reads: dict[str, list[str]], state: str, seen: Counter[str]
) -> list[str]:
    """Every page and the given API reads of every reader, the readers at once; the 5xx."""
    failed: list[str] = []
    with ThreadPoolExecutor(max_workers=len(readers)) as pool:
        for counts, bad in pool.map(lambda r: _read_all(r, reads.get(r.role, []), state), readers):
            seen.update(counts)
            failed += bad
    seen["states"] += 1
    return failed


def wait_graded(staff: Reader, code: str, runs: dict[str, int]) -> None:
    deadline = time.monotonic() + 240
    for key, run in runs.items():
        while True:
            r = staff.api.get(f"{staff.base}/api/v1/courses/{code}/grading-runs/{run}/", timeout=60)
            assert r.status_code == 200, (key, r.status_code, r.text[:300])
            status = r.json()["status"]
            if status == "done":
                break
            assert status != "failed", (key, r.json())
            assert time.monotonic() < deadline, f"{key}: grading not done in 240 s ({r.json()})"
            time.sleep(0.5)


def term_steps(course: Any) -> list[tuple[str, dt.datetime]]:
    """One instant per week, from the week before the first lecture to the week after the last
    dated row: during that week's first lecture (its check-in window open) when it has one,
    else Wednesday noon, course time."""
    from apps.calendar.models import Assignment, Lecture, Milestone
    from apps.checkoffs.models import CheckoffSlot
    from apps.labs.models import CourseLab
    from apps.peerreview.models import PeerRound

    tz = course.tz
    lectures = list(Lecture.objects.filter(course=course).order_by("starts_at"))
    last = max(
        at
        for at in [
            lectures[-1].ends_at,
            *Assignment.objects.filter(course=course).values_list("due_at", flat=True),
            *Milestone.objects.filter(course=course).values_list("due_at", flat=True),
            *CourseLab.objects.filter(course=course).values_list("closes_at", flat=True),
            *CheckoffSlot.objects.filter(set__course=course).values_list("ends_at", flat=True),
            *PeerRound.objects.filter(course=course).values_list("due_at", flat=True),
        ]
        if at is not None
    ).astimezone(tz)
    first = lectures[0].starts_at.astimezone(tz).date()
    monday = first - dt.timedelta(days=first.weekday() + 7)
    steps = []
    week = 0
    while monday <= last.date() + dt.timedelta(days=7):
        sunday = monday + dt.timedelta(days=7)
        in_week = [
            lec for lec in lectures if monday <= lec.starts_at.astimezone(tz).date() < sunday
        ]
        at = (
            in_week[0].starts_at + dt.timedelta(minutes=15)
            if in_week
            else dt.datetime.combine(monday + dt.timedelta(days=2), dt.time(12), tz)
        )
        steps.append((f"week {week}", at))
        monday, week = sunday, week + 1
    return steps


def _goto(page: Any, url: str) -> None:
    """Open `url`, again if Chromium dropped the navigation because the machine's network
    changed under it (ERR_NETWORK_CHANGED: an interface or address appearing elsewhere on a
    shared machine, nothing the server said); any other error is raised at once."""
    for attempt in range(3):
        try:
            page.goto(url, wait_until="load")
            return
        except Exception as exc:
            if "ERR_NETWORK_CHANGED" not in str(exc) or attempt == 2:
                raise
            time.sleep(1)


def axe_scan(
    chromium: Any,
    base: str,
    readers: list[Reader],
    pick: dict[str, list[str]],
    state: str,
    seen: Counter[str],
) -> list[str]:
    """axe-core on the picked pages of each reader, in Chromium at 1280 px."""
    from axe_playwright_python.sync_playwright import Axe

    found: list[str] = []
    axe = Axe()
    for reader in readers:
        paths = pick.get(reader.role, [])
        if not paths:
            continue
        reader.page(paths[0])  # logged in at this step's clock
        # nginx's certificate is the test's own, self-signed (tests/edge.py).
        context = chromium.new_context(
            viewport={"width": 1280, "height": 900}, ignore_https_errors=True
        )
        context.add_cookies(
            [
                {"name": name, "value": value, "url": base}
                for name, value in reader.browser.jar.items()
            ]
        )
        page = context.new_page()
        try:
            for path in paths:
                _goto(page, base + path)
                if not path.startswith("/accounts/"):
                    assert "/accounts/login/" not in page.url, (reader.role, path)
                results = axe.run(page, options=WCAG)
                seen["axe scans"] += 1
                found += [
                    f"[{state}] {reader.role} {path}: {v['id']} ({v['impact']}): {v['help']}"
                    for v in results.response["violations"]
                ]
        finally:
            context.close()
    return found


def walk_the_term(  # type: ignore[no-untyped-def]
    base: str,
    world: World,
    clock: Clock,
    browsers: dict[str, Any],
    pages: dict[str, list[str]],
    origin: str | None = None,
) -> str:
    """Every shipped set through its life, then every week of the term; returns the report.
    `origin` is gunicorn's own address when `base` is a proxy's (nginx sets its own Date)."""
    from playwright.sync_api import sync_playwright

    from apps.autograder.bank import BANKS
    from apps.autograder.models import QuestionSet

    started = time.monotonic()
    course = world.course
    code = course.code
    readers = [Reader(base, world, role, browsers[role], pages[role]) for role in READERS]
    staff = readers[-1]
    everything = api_reads(base, world)
    keys = sorted(QuestionSet.objects.filter(course=course).values_list("key", flat=True))
    shipped = {path.stem for path in BANKS.glob("*.yaml")}
    assert shipped <= set(keys), keys  # every shipped bank is there (and any set staff made)
    seen: Counter[str] = Counter()
    violations: list[str] = []
    errors: list[str] = []
    question_pages = {
        r.role: [p for p in r.pages if "/questions/" in p] for r in readers if r.role != "ta"
    }

    def sets(action: str, body: dict[str, Any] | None = None) -> dict[str, int]:
        out = {}
        for key in keys:
            r = staff.api.post(
                f"{base}/api/v1/courses/{code}/question-sets/{key}/{action}/",
                json=body,
                timeout=120,
            )
            assert r.status_code < 500, (action, key, r.status_code, r.text[:500])
            if key in shipped:  # a set made during the crawl may have nothing to grade: 4xx
                assert r.status_code in {200, 202}, (action, key, r.status_code, r.text[:500])
            if action == "runs" and r.status_code == 202:
                out[key] = r.json()["id"]
        return out

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium")
        # 1. Every shipped set through its life, at today's clock (the demo's week 7).
        for state, action, body in (
            ("graded", "runs", None),
            ("released", "release", {"released": True}),
            ("regraded", "runs", None),
            ("hidden", "release", {"released": False}),
        ):
            runs = sets(action, body)
            if runs:
                wait_graded(staff, code, runs)
            errors += crawl_reads(readers, dict.fromkeys(READERS, everything), state, seen)
            violations += axe_scan(chromium, base, readers, question_pages, state, seen)
        sets("release", {"released": True})  # the weeks below see the results released

        # 2. The term, week by week: every page at each step, API reads as sampled, axe on a slice.
        steps = term_steps(course)
        assert len(steps) >= 15, [s for s, _ in steps]
        try:
            for n, (state, at) in enumerate(steps):
                clock.set(at)
                # The server answers at the stepped clock: its Date header (gunicorn's, from
                # the worker's time.time(); asked directly, as nginx writes its own) is the
                # step's instant, not today.
                answer = requests.get(
                    f"{origin or base}/healthz", allow_redirects=False, timeout=60
                )
                served = parsedate_to_datetime(answer.headers["Date"])
                assert abs(served - at) < dt.timedelta(minutes=10), (state, served, at)
                reads = {"student_a": everything} | (
                    {"ta": everything, "instructor": everything} if n % 2 == 0 else {}
                )
                errors += crawl_reads(readers, reads, state, seen)
                pick = {r.role: r.pages[n :: len(steps)] for r in readers}
                violations += axe_scan(chromium, base, readers, pick, state, seen)
        finally:
            clock.set(None)

    counts = {r.role: len(r.pages) for r in readers}
    report = (
        f"term crawl — {len(errors)} × 5xx; {seen['states']} states (4 set states × "
        f"{len(keys)} sets + {len(steps)} weeks) × pages {counts} and {len(everything)} API reads per role (sampled as the "
        f"module says): {seen['page reads']} page reads, {seen['api reads']} API reads; "
        f"{seen['axe scans']} axe scans, {len(violations)} violations; "
        f"{time.monotonic() - started:.0f} s"
    )
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "term-crawl.txt").write_text("\n".join([report, *errors, *violations]) + "\n")
    assert errors == [], errors[:20]
    assert violations == [], violations[:20]
    return report
