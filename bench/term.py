"""A whole term replayed through the services: EE 290 Spring 2026 with 2,000 students in 400
groups (TERM_STUDENTS to change), a simulated clock from the questionnaire (Jan 20) to the
impact update (May 15), the reminder task run as the clock passes, and every invariant
(`check_course`) checked at the end of every simulated week.

What happens, in course order: nodes go to the first groups at formation; groups change
(members removed and moved, groups merged and dissolved) through the staff services; groups
that hold nodes share them through windows; students spend and cancel slack days before
deadlines; groups book checkoff slots. Prints wall time, actions taken by kind, e-mails sent and
invariant violations. Never passes or fails. Uses a throwaway PostgreSQL database when
127.0.0.1:5432 answers (SQLite otherwise).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import port_answers  # noqa: E402

DB = "courseops_bench_term"
STUDENTS = int(os.environ.get("TERM_STUDENTS", "2000"))
if port_answers(5432):
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", DB], check=False, capture_output=True)
    subprocess.run(["createdb", *pg, DB], check=False, capture_output=True)
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
else:
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
os.environ["DJANGO_SETTINGS_MODULE"] = "courseops.settings.dev"
os.environ["DEBUG"] = "false"
os.environ.pop("REDIS_URL", None)  # Celery eager: the replay runs every task in-process

import django  # noqa: E402

django.setup()

import time_machine  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core import mail  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from apps.calendar.models import Assignment  # noqa: E402
from apps.calendar.reminders import reminders_send  # noqa: E402
from apps.checkoffs import services as checkoffs  # noqa: E402
from apps.compute.board import services as compute  # noqa: E402
from apps.compute.board import windows  # noqa: E402
from apps.compute.models import Allocation  # noqa: E402
from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.core.errors import DomainError  # noqa: E402
from apps.core.invariants import run_checks  # noqa: E402
from apps.core.models import Role  # noqa: E402
from apps.groups import services as groups  # noqa: E402
from apps.groups.models import Group, GroupMembership  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from apps.slackdays import services as slack  # noqa: E402
from tests.bigcourse import build_big_course  # noqa: E402

logging.getLogger("celery").setLevel(logging.WARNING)  # one line per eager task otherwise
settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
settings.CELERY_TASK_ALWAYS_EAGER = True
mail.outbox = []
rng = random.Random(2026)
actions: collections.Counter[str] = collections.Counter()
refused: collections.Counter[str] = collections.Counter()
violations: list[str] = []


def act(kind: str, call, **kwargs) -> object:  # type: ignore[no-untyped-def]
    """Run one service call; a refusal (DomainError) is counted, never fatal."""
    try:
        result = call(**kwargs)
    except DomainError:
        refused[kind] += 1
        return None
    actions[kind] += 1
    return result


started = time.perf_counter()
call_command("migrate", verbosity=0)
cf = parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
course = course_load(cf=cf).course
people = build_big_course(course, STUDENTS)
staff = people[str(Role.INSTRUCTOR)]
built = time.perf_counter() - started
tz = course.tz
start = dt.datetime(2026, 1, 20, 9, tzinfo=tz)
end = dt.datetime(2026, 5, 15, 18, tzinfo=tz)
assignments = list(Assignment.objects.filter(course=course).order_by("due_at"))
# The roster was built today; in the replay everyone joined before the term began.
GroupMembership.objects.filter(course=course).update(joined_at=start - dt.timedelta(days=1))


def live_groups() -> list[Group]:
    return list(Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("pk"))


def member_of(group: Group):  # type: ignore[no-untyped-def]
    m = group.memberships.filter(left_at__isnull=True).select_related("user").first()
    return m.user if m else None


def formation_day(now: dt.datetime) -> None:
    """Nodes to the first groups (the course has 8), one sign-up with slots for A2."""
    for g in live_groups()[:8]:
        act("allocate", compute.allocation_create, actor=staff, course=course, group_id=g.pk)
    a2 = next(a for a in assignments if a.code == "A2")
    s = checkoffs.set_create(actor=staff, course=course, kind="assignment", assignment_id=a2.pk)
    first = now + dt.timedelta(days=3)
    plans = []
    for day in range(5):
        for k in range(16):
            at = first + dt.timedelta(days=day, minutes=15 * k)
            plans += checkoffs.single_plan(
                course=course,
                starts_at=at,
                ends_at=at + dt.timedelta(minutes=15),
                location="Cory 258",
                capacity=5,
                staff_id=None,
            )
    made = checkoffs.slots_create(actor=staff, course=course, set_id=s.pk, plans=plans)
    checkoffs.set_publish(actor=staff, course=course, set_id=s.pk, published=True)
    for g in live_groups():
        who = member_of(g)
        if who is not None:
            slot = rng.choice(made)
            act("book", checkoffs.book, actor=who, course=course, slot_id=slot.pk)


def reshuffle() -> None:
    """A week's group changes: a few students moved, two groups merged, one dissolved."""
    live = live_groups()
    for _ in range(3):
        g = rng.choice(live)
        m = g.memberships.filter(left_at__isnull=True).order_by("?").first()
        if m is not None:
            act("remove", groups.member_remove, actor=staff, course=course, user_id=m.user_id)
            target = rng.choice(live)
            act(
                "move",
                groups.member_move,
                actor=staff,
                course=course,
                user_id=m.user_id,
                group_id=target.pk,
            )
    small = sorted(live, key=lambda g: g.memberships.filter(left_at__isnull=True).count())
    if len(small) >= 2:
        a, b = small[0], small[1]
        act("merge", groups.group_merge, actor=staff, course=course, source_id=a.pk, target_id=b.pk)
    holders = [a.group_id for a in Allocation.objects.filter(course=course, ended_at__isnull=True)]
    victim = rng.choice(holders) if holders and rng.random() < 0.5 else rng.choice(live).pk
    act("dissolve", groups.group_dissolve, actor=staff, course=course, group_id=victim)
    for g in live_groups():  # keep the nodes busy: the next groups without one get the free ones
        if Allocation.objects.filter(course=course, ended_at__isnull=True).count() >= 8:
            break
        if not Allocation.objects.filter(group=g, ended_at__isnull=True).exists():
            act(
                "allocate",
                compute.allocation_create,
                actor=staff,
                course=course,
                group_id=g.pk,
                override_reason="term replay",
            )


def share_nodes(now: dt.datetime) -> None:
    held = list(Allocation.objects.filter(course=course, ended_at__isnull=True).order_by("pk"))
    if len(held) < 2:
        return
    a, b = rng.sample(held, 2)
    who = member_of(a.group)
    if who is None:
        return
    begins = now + dt.timedelta(hours=rng.randint(6, 60))
    w = act(
        "window request",
        windows.window_request,
        actor=who,
        course=course,
        node_ids=[b.node_id],
        starts_at=begins,
        ends_at=begins + dt.timedelta(hours=6),
    )
    if w is not None:
        act("window approve", windows.window_approve, actor=staff, course=course, window_id=w.pk)


def slack_days(now: dt.datetime) -> None:
    """Groups spend a day on an assignment due in the next two days; a few cancel."""
    soon = [a for a in assignments if now < a.due_at <= now + dt.timedelta(days=2)]
    for a in soon:
        for g in rng.sample(live_groups(), k=max(1, len(live_groups()) // 20)):
            who = member_of(g)
            if who is None:
                continue
            done = act(
                "slack apply", slack.slack_apply, actor=who, course=course, assignment_id=a.pk
            )
            if done and rng.random() < 0.2:
                act(
                    "slack cancel", slack.slack_cancel, actor=who, course=course, assignment_id=a.pk
                )


print(
    f"EE 290 Spring 2026 replayed with {STUDENTS:,} students ({connection.vendor}); "
    f"built in {built:.1f} s"
)
replay = time.perf_counter()
reminders_sent = 0
now = start
formed = False
with time_machine.travel(now, tick=False) as clock:
    while now < end:
        day = now.date()
        if not formed and day >= dt.date(2026, 1, 29):
            formation_day(now)
            formed = True
        if formed:
            slack_days(now)
            share_nodes(now)
            if now.weekday() == 0:
                reshuffle()
        for hour in (0, 6, 12, 18):  # the reminder task, as beat would run it through the day
            clock.move_to(dt.datetime.combine(day, dt.time(hour), tzinfo=tz))
            reminders_sent += reminders_send(course=course)
        if now.weekday() == 6:
            found = run_checks(course.pk)
            violations += [f"{day}: {v.check}: {v.detail}" for v in found]
        now = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(9), tzinfo=tz)
        clock.move_to(now)
    violations += [f"end: {v.check}: {v.detail}" for v in run_checks(course.pk)]
wall = time.perf_counter() - replay
print(f"replay: {wall:.1f} s wall for {(end - start).days} simulated days")
print("actions: " + ", ".join(f"{k} {n}" for k, n in sorted(actions.items())))
print("refused by a rule: " + (", ".join(f"{k} {n}" for k, n in sorted(refused.items())) or "0"))
print(f"e-mails: {len(mail.outbox):,} ({reminders_sent:,} reminders)")
live = Group.objects.filter(course=course, dissolved_at__isnull=True).count()
grouped = GroupMembership.objects.filter(course=course, left_at__isnull=True).count()
print(f"at the end: {live} groups, {grouped:,} students in a group")
print(f"invariant violations: {len(violations)}")
for v in violations[:20]:
    print("  " + v)
connection.close()
with contextlib.suppress(Exception):
    if port_answers(5432):
        subprocess.run(["dropdb", *pg, "--if-exists", DB], check=False, capture_output=True)
