"""Reminders at course scale: 2,000 students in 400 groups, 16 personal deadlines each (5
assignments and 11 tracked milestones: the course file's 8 and 3 more, all moved into the next
48 hours so every one is due a reminder), a few hundred accommodations and extensions. Prints
the time to compute every reminder that fits now (`reminders_due`: what the beat task does
before sending), then the time to claim, render and send them all over SMTP to a local sink
(Postfix's smtp-sink when installed, else bench/smtp_sink.py, aiosmtpd in its own process; the
sink's files in /dev/shm; each phase apart, every recipient and subject counted there), then a
second run (nothing to send), then the same reminders as beat sends them: the beat task on one
of 2 Celery worker processes, its batches handed to both. Never passes or fails. Uses a
throwaway PostgreSQL database when 127.0.0.1:5432 answers.
"""

from __future__ import annotations

import atexit
import datetime as dt
import email
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import port_answers, start_worker, worker_task_ends  # noqa: E402
from bench.results import record  # noqa: E402

DB = "courseops_bench_reminders"
if port_answers(5432):
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", DB], check=False, capture_output=True)
    subprocess.run(["createdb", *pg, DB], check=False, capture_output=True)
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
else:
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
os.environ["DEBUG"] = "false"
if port_answers(6379):  # the last phase runs the beat task on Celery workers
    os.environ["REDIS_URL"] = "redis://127.0.0.1:6379/13"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from apps.calendar.models import Assignment, Milestone, Reminder  # noqa: E402
from apps.calendar.reminders import SendTimes, reminders_due, reminders_send  # noqa: E402
from apps.calendar.tasks import send_reminders  # noqa: E402
from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

SINK_PORT = 8025
# The sink: Postfix's smtp-sink (C, made for benchmarks; Debian's `postfix` package) when it is
# installed, dumping each message to a file; else bench/smtp_sink.py (aiosmtpd, Python: about
# 0.7 ms of CPU per message on this machine's two cores, shared with the sender).
# The sink writes every message to a file: in memory (/dev/shm) where there is one, else the disk,
# whose writes (about 2,000 files/s here) would be what the bench measures.
SHM = Path("/dev/shm")  # noqa: S108 - mkdtemp makes a private directory inside it
sink_dir = Path(tempfile.mkdtemp(dir=SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else None))
sink_file = sink_dir / "received.tsv"


def _smtp_sink() -> str:
    return shutil.which("smtp-sink") or (
        "/usr/sbin/smtp-sink" if Path("/usr/sbin/smtp-sink").exists() else ""
    )


# The figure is measured against Postfix's sink, never the Python one: install Debian's postfix
# (which carries smtp-sink) when this runs as root on a Debian machine without it.
if not _smtp_sink() and shutil.which("apt-get") and os.geteuid() == 0:
    print("installing Debian's postfix for its smtp-sink (once)")
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "postfix"],
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        capture_output=True,
        check=False,
    )
SMTP_SINK = _smtp_sink()
if SMTP_SINK:
    sink = subprocess.Popen(
        [SMTP_SINK, "-u", "root", "-d", f"{sink_dir}/%H%M%S.", f"127.0.0.1:{SINK_PORT}", "256"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    sink_name = "Postfix smtp-sink"
else:
    sink = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "smtp_sink.py"), str(SINK_PORT), str(sink_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # never the bench's own pipe: a reader would wait for it
        text=True,
    )
    assert sink.stdout is not None
    assert sink.stdout.readline().strip() == "ready"
    sink_name = "aiosmtpd sink"


def _stop_sink() -> None:
    """However the bench ends (a failed assertion, Ctrl-C), its sink ends with it."""
    if sink.poll() is None:
        sink.terminate()
        try:
            sink.wait(10)
        except subprocess.TimeoutExpired:
            sink.kill()


atexit.register(_stop_sink)
settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", SINK_PORT
settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
call_command("migrate", verbosity=0)
cf = parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
course = course_load(cf=cf).course
build_big_course(course, 2000)
now = timezone.now()
# Every deadline 20–44 h from now: each of the 2,000 × 16 is due its 48 h reminder.
for i, a in enumerate(Assignment.objects.filter(course=course).order_by("due_at")):
    Assignment.objects.filter(pk=a.pk).update(
        release_at=now - dt.timedelta(days=7), due_at=now + dt.timedelta(hours=20 + i)
    )
Milestone.objects.filter(course=course).update(tracked=True)
for k in range(
    16
    - Assignment.objects.filter(course=course).count()
    - Milestone.objects.filter(course=course).count()
):
    Milestone.objects.create(
        course=course, key=f"bench-{k}", name=f"Bench milestone {k}", due_at=now
    )
for i, m in enumerate(Milestone.objects.filter(course=course).order_by("due_at")):
    Milestone.objects.filter(pk=m.pk).update(due_at=now + dt.timedelta(hours=26 + i))
deadlines = (
    Assignment.objects.filter(course=course).count()
    + Milestone.objects.filter(course=course).count()
)
print(f"2,000 students × {deadlines} deadlines ({connection.vendor})")

times = []
for _ in range(5):
    t = time.perf_counter()
    due = reminders_due(course=course, now=timezone.now())
    times.append(time.perf_counter() - t)
print(f"compute reminders due now: {len(due):,} in {statistics.median(times):.2f} s (median of 5)")
# A worker in service has rendered before: its template engine has loaded every app's tag
# libraries (0.5 s once per process here, djangosaml2's pulling in pysaml2 and xmlschema).
from django.template import engines  # noqa: E402

assert engines["django"].engine.template_libraries  # type: ignore[attr-defined]
t = time.perf_counter()
parts = SendTimes()
sent = reminders_send(course=course, times=parts)
total = time.perf_counter() - t
print(
    f"claim + render + send (SMTP to {sink_name}): {sent:,} e-mails in {total:.1f} s — claim "
    f"{parts.claim:.1f} s, render {parts.render:.1f} s, send {parts.send:.1f} s (the rest: "
    f"computing what is due, {total - parts.claim - parts.render - parts.send:.1f} s)"
)


def arrived() -> int:
    """How many messages the sink has taken so far (cheap enough to poll)."""
    if not SMTP_SINK:
        return sum(1 for _ in sink_file.open(encoding="utf-8")) if sink_file.exists() else 0
    return sum(1 for f in sink_dir.iterdir() if f.name != sink_file.name)


def received() -> list[str]:
    """One "recipient<TAB>subject" line per message the sink took."""
    if not SMTP_SINK:
        return sink_file.read_text(encoding="utf-8").splitlines() if sink_file.exists() else []
    out = []
    for f in sink_dir.iterdir():
        if f.name == sink_file.name:
            continue
        msg = email.message_from_bytes(f.read_bytes())
        subject = " ".join(str(msg.get("Subject", "")).split())
        out.append(f"{msg.get('X-Rcpt-Args', '').strip('<>')}\t{subject}")
    return out


deadline = time.monotonic() + 30  # the sink writes as it receives; the last batch may trail
while arrived() < sent and time.monotonic() < deadline:
    time.sleep(0.1)
got = received()
print(f"the sink received {len(got):,} messages, {len(set(got)):,} distinct (recipient, subject)")
assert len(got) == sent, "each reminder once"
assert len(set(got)) == sent, "no reminder twice"


def smtplib_floor(n: int, size: int) -> float:
    """The wire's floor: `n` pre-built messages of `size` bytes sent with plain smtplib over the
    same number of connections (one thread each) to the same sink."""
    import smtplib
    from concurrent.futures import ThreadPoolExecutor

    k = max(1, settings.SMTP_SEND_CONNECTIONS)
    body = b"Subject: floor\r\nFrom: bench@example.edu\r\nTo: x@example.edu\r\n\r\n"
    body += b"x" * max(0, size - len(body) - 2) + b"\r\n"

    def send(part: int) -> None:
        with smtplib.SMTP("127.0.0.1", SINK_PORT) as smtp:
            for i in range(part, n, k):
                smtp.sendmail("bench@example.edu", [f"s{i}@example.edu"], body)

    t = time.perf_counter()
    with ThreadPoolExecutor(k) as pool:
        list(pool.map(send, range(k)))
    return time.perf_counter() - t


sizes = [f.stat().st_size for f in sink_dir.iterdir() if f.name != sink_file.name][:500]
size = int(statistics.mean(sizes)) if sizes else 3000
if SMTP_SINK:
    for f in sink_dir.iterdir():
        f.unlink()
    floor = smtplib_floor(sent, size)
    print(
        f"floor: smtplib, {sent:,} pre-built {size:,}-byte messages over "
        f"{settings.SMTP_SEND_CONNECTIONS} connections to the same sink: {floor:.1f} s"
    )
    record("reminders", f"claim + render + send {sent:,}", total, "s", floor=floor, target=1.5)
    time.sleep(1)  # the sink writes its last files after the last reply
    for f in sink_dir.iterdir():
        f.unlink()
else:
    print("floor: not measured (no Postfix smtp-sink; the Python sink is not a floor)")
t = time.perf_counter()
again = reminders_send(course=course)
print(f"second run in the same minute: {again} e-mails in {time.perf_counter() - t:.2f} s")

if port_answers(6379):
    # The same reminders once more (claims cleared, the sink emptied), now as beat runs them: the
    # beat task on one of 2 Celery worker processes claims and renders every batch, sends the
    # first and hands the others to whichever worker is free.
    from courseops.celery import app

    Reminder.objects.filter(course=course).delete()
    for f in sink_dir.iterdir():
        f.unlink()
    app.control.purge()
    env = {
        **os.environ,
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(SINK_PORT),
        "EMAIL_USE_TLS": "false",
    }
    logs = [Path(tempfile.gettempdir()) / f"{sink_dir.name}-worker-{i}.log" for i in range(2)]
    workers = [start_worker(env, f"bench-reminders-{i}", log) for i, log in enumerate(logs)]
    try:
        deadline = time.monotonic() + 60
        while len(app.control.ping(timeout=0.5)) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        start = dt.datetime.now()  # the workers log local wall-clock time
        t = time.perf_counter()
        handed = send_reminders.delay().get(timeout=600)
        t_beat = time.perf_counter() - t
        batches = -(-handed // settings.REMINDER_BATCH) - 1  # the first is the beat task's own
        ends: list[dt.datetime] = []
        deadline = time.monotonic() + 600
        while len(ends) < batches and time.monotonic() < deadline:
            time.sleep(0.2)
            ends = [
                e for log in logs for e in worker_task_ends(log, "calendar.send_reminder_batch")
            ]
        per_worker = [len(worker_task_ends(log, "calendar.send_reminder_batch")) for log in logs]
        done = (max(ends) - start).total_seconds() if ends else float("nan")
        deadline = time.monotonic() + 120  # the sink's own writing trails the SMTP replies
        while arrived() < handed and time.monotonic() < deadline:
            time.sleep(0.2)
        got = received()
        print(
            f"the beat task on 2 worker processes: {handed:,} e-mails sent in {done:.1f} s "
            f"from the task's start to the last batch's last SMTP reply (the beat task itself "
            f"{t_beat:.1f} s: compute, claim, render, its own first batch; {batches} batches "
            f"handed on, {' + '.join(map(str, per_worker))} per worker); the sink received "
            f"{len(got):,}, {len(set(got)):,} distinct"
        )
        assert len(got) == len(set(got)) == sent, "each reminder once"
    finally:
        for w in workers:
            w.terminate()
            w.wait(20)
        for log in logs:
            log.unlink(missing_ok=True)
_stop_sink()
shutil.rmtree(sink_dir, ignore_errors=True)
connection.close()
if port_answers(5432):
    subprocess.run(
        ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB],
        check=False,
        capture_output=True,
    )
