"""Group suggestions for a whole course on a worker: 2,000 students (none in a group yet), each
with research interests and 0–3 teammate wishes (every seventh a mutual pair). Staff press
"Suggest groups" on the page: the request's own time, then the worker's progress as the page
shows it, the time to done, what the suggestion keeps, then "Accept" pressed on the page (the
request's own time) and the worker's time until the groups exist, every rule kept. Prints
figures; never passes or fails.

Needs PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379); starts one Celery worker process.
`bench_suggestions.py 600` for another course size.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import bare_page_ms, fresh_database, port_answers, start_worker  # noqa: E402
from bench.results import record  # noqa: E402

if not (port_answers(5432) and port_answers(6379)):
    print("skipped: needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379")
    sys.exit(0)
DB = "courseops_bench_suggestions"
DB_URL = fresh_database(DB)
ENV = {
    "DATABASE_URL": DB_URL,
    "REDIS_URL": "redis://127.0.0.1:6379/12",
    "DJANGO_SETTINGS_MODULE": "courseops.settings.dev",
    "DEBUG": "false",
}
os.environ.update(ENV)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test import Client  # noqa: E402

from apps.core.coursefile import parse_course_file  # noqa: E402
from apps.core.models import Membership, Role, User  # noqa: E402
from apps.groups.models import GroupMembership  # noqa: E402
from apps.onboarding import services  # noqa: E402
from apps.onboarding.defaults import RESEARCH_DIRECTIONS  # noqa: E402
from apps.onboarding.models import GroupSuggestion, QuestionnaireResponse  # noqa: E402
from apps.setup.course_loader import course_load  # noqa: E402
from courseops.celery import app  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
settings.ALLOWED_HOSTS = ["*"]
call_command("migrate", verbosity=0)
cf = parse_course_file((ROOT / "courses" / "ee290-sp26.yaml").read_text(encoding="utf-8"))
course = course_load(cf=cf).course
users = User.objects.bulk_create(
    [User(email=f"s{i:05d}@bench.example", full_name=f"Student {i:05d}") for i in range(N)],
    batch_size=2000,
)
Membership.objects.bulk_create(
    [Membership(user=u, course=course, role=Role.STUDENT) for u in users], batch_size=2000
)
staff = User.objects.create(email="instructor@bench.example", full_name="The instructor")
Membership.objects.create(user=staff, course=course, role=Role.INSTRUCTOR)
q = services.questionnaire_setup(actor=staff, course=course)
rng = random.Random(290)
emails = [u.email for u in users]
wish: dict[str, set[str]] = {e: set(rng.sample(emails, rng.randint(0, 3))) - {e} for e in emails}
for i in range(0, N - 1, 7):
    wish[emails[i]].add(emails[i + 1])
    wish[emails[i + 1]].add(emails[i])
QuestionnaireResponse.objects.bulk_create(
    [
        QuestionnaireResponse(
            questionnaire=q,
            student=u,
            answers={
                "interests": rng.sample(RESEARCH_DIRECTIONS, rng.randint(1, 3)),
                "teammates": sorted(wish[u.email]),
            },
        )
        for u in users
    ],
    batch_size=2000,
)

app.control.purge()
worker = start_worker({**os.environ, **ENV}, "bench-suggest")
try:
    deadline = time.monotonic() + 60
    while not app.control.ping(timeout=0.5) and time.monotonic() < deadline:
        time.sleep(0.3)
    web = Client()
    web.force_login(staff)
    base = f"/c/{course.code}/questionnaire/suggestions/"
    web.get(base)  # warm: templates and URL resolvers, as on a running server
    bare = bare_page_ms(web)  # the floor of a request: a page with no data, same client
    t0 = time.perf_counter()
    answer = web.post(base + "make/", {"seed": "0"})
    t1 = time.perf_counter()
    record("suggestions", "'Suggest groups' request", 1000 * (t1 - t0), "ms", floor=bare)
    print(
        f"{N:,} students waiting: 'Suggest groups' answered {answer.status_code} in "
        f"{1000 * (t1 - t0):.0f} ms (target < 200 ms); a worker computes it"
    )
    seen: list[str] = []
    s = GroupSuggestion.objects.get(course=course)
    while time.perf_counter() - t1 < 600:
        s.refresh_from_db()
        page_ms = time.perf_counter()
        web.get(base)
        page_ms = 1000 * (time.perf_counter() - page_ms)
        seen.append(f"{s.progress}%")
        if s.status not in GroupSuggestion.IN_PROGRESS:
            break
        time.sleep(1)
    t2 = time.perf_counter()
    st = s.stats
    print(f"progress on the page: {' → '.join(dict.fromkeys(seen))}")
    print(
        f"{s.status} in {t2 - t1:.1f} s: {len(s.groups)} groups; mutual wishes kept "
        f"{st.get('mutual_kept')} of {st.get('mutual_pairs')} ({st.get('mutual_possible')} "
        f"possible), one-sided kept {st.get('one_sided_kept')}, shared interests "
        f"{st.get('shared_interests')}{'; ' + s.note if s.note else ''}"
    )
    t3 = time.perf_counter()
    page = web.get(base)
    t4 = time.perf_counter()
    print(
        f"the page with the suggestion: {len(page.content) / 1024:.0f} KB in "
        f"{1000 * (t4 - t3):.0f} ms"
    )
    t4 = time.perf_counter()
    answer = web.post(base + f"{s.pk}/accept/")
    t5 = time.perf_counter()
    record("suggestions", "'Accept' request", 1000 * (t5 - t4), "ms", floor=bare)
    print(
        f"'Accept' answered {answer.status_code} in {1000 * (t5 - t4):.0f} ms "
        "(target < 200 ms); a worker creates the groups"
    )
    while time.perf_counter() - t5 < 600:
        s.refresh_from_db()
        web.get(base)
        if s.status != GroupSuggestion.Status.ACCEPTING:
            break
        time.sleep(0.5)
    t6 = time.perf_counter()
    if s.accepted_at is None:
        raise SystemExit(f"not accepted: {s.note}")
    sizes = list(
        GroupMembership.objects.filter(course=course, left_at__isnull=True)
        .values("group_id")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    print(
        f"accepted: {len(sizes)} groups, {sum(sizes):,} students placed, sizes "
        f"{min(sizes)}–{max(sizes)} (allowed {course.group_min_size}–{course.group_max_size}) "
        f"by the worker in {t6 - t5:.1f} s"
    )
finally:
    worker.terminate()
    worker.wait(20)
