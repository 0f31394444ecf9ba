"""Query budgets: every list page and list endpoint, for a student and for staff, runs the same
number of queries with 20 students as with 200 (growth fails), and a paginated page stays small
however large the course. Which pages and lists there are is found from the URL conf: one that
is neither measured here nor named in NOT_BUDGETED (with why) fails the last test."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.core.coursefile import parse_course_file
from apps.setup.course_loader import course_load
from tests.bigcourse import build_big_course
from tests.conftest import COURSE_FILE

pytestmark = pytest.mark.django_db

C = "/c/{code}/"
A = "/api/v1/courses/{code}/"
STUDENT_URLS = [
    C,
    C + "labs/",
    C + "labs/lab09-perf-engr/",
    A + "labs/lab09-perf-engr/",
    C + "calendar/",
    C + "calendar/?view=list",
    C + "milestones/",
    A + "calendar/",
    A + "milestones/",
    C + "group/",
    C + "node/",
    C + "node/usage/",
    C + "slack/",
    C + "incidents/",
    C + "questions/",
    A + "groups/",
    A + "slack/me/",
    A + "slack/ledger/",
    A + "slack/exceptions/",
    A + "allocations/",
    A + "windows/",
    A + "incidents/",
    A + "nodes/",
    C + "scribing/",
    A + "scribing/lectures/",
    A + "scribing/duties/",
    A + "scribing/swaps/",
    C + "peer-review/",
    A + "peer-review/rounds/",
    A + "peer-review/drafts/",
    A + "peer-review/reviews/",
    C + "checkoffs/",
    A + "checkoffs/sets/",
    A + "checkoffs/sets/{set}/slots/",
    A + "checkoffs/bookings/",
    C + "assessments/",
    C + "assessments/{assessment}/",
    A + "assessments/",
    C + "gradebook/",
    C + "gradebook/?target=A-",
    A + "gradebook/me/",
    A + "gradebook/components/",
    C + "impact/",
    A + "impact/items/",
    C + "participation/",
    A + "participation/events/",
    C + "questionnaire/",
    A + "questionnaire/",
    C + "contributions/",
    A + "contributions/",
    C + "extensions/",
    A + "extensions/",
    C + "checkin/",
    A + "participation/checkin/",
    C + "runs/",
    C + "questions/mlsysim-quiz/",
    A + "runs/",
    A + "regrades/",
    A + "labs/",
    A + "question-sets/",
    A + "question-sets/mlsysim-quiz/mine/",
    A + "incidents/course-wide/",
    A + "peer-review/rounds/{round}/assignments/",
]
STAFF_URLS = [
    C + "labs/",
    C + "labs/lab09-perf-engr/",
    A + "labs/lab09-perf-engr/",
    C,
    C + "calendar/",
    C + "calendar/?view=list",
    C + "milestones/",
    A + "calendar/",
    A + "milestones/",
    C + "groups/",
    C + "roster/",
    C + "slack/staff/",
    C + "compute/",
    C + "incidents/",
    A + "groups/",
    A + "groups/ungrouped/",
    A + "roster/",
    A + "slack/balances/",
    A + "slack/ledger/",
    A + "slack/exceptions/",
    A + "allocations/",
    A + "windows/",
    A + "incidents/",
    A + "nodes/",
    A + "static-ips/",
    C + "scribing/",
    A + "scribing/lectures/",
    A + "scribing/duties/",
    A + "scribing/swaps/",
    C + "peer-review/",
    A + "peer-review/rounds/",
    A + "peer-review/drafts/",
    A + "peer-review/reviews/",
    C + "checkoffs/",
    C + "checkoffs/schedule/?date=2030-04-30",
    C + "checkoffs/outcomes/",
    A + "checkoffs/sets/",
    A + "checkoffs/sets/{set}/slots/",
    A + "checkoffs/sets/{set}/unbooked/",
    A + "checkoffs/bookings/",
    C + "assessments/",
    C + "assessments/{assessment}/",
    A + "assessments/",
    A + "assessments/{assessment}/report/",
    C + "gradebook/",
    C + "gradebook/?sort=-total&page=2",
    C + "gradebook/components/",
    C + "gradebook/import/",
    A + "gradebook/students/",
    A + "gradebook/scores/",
    A + "gradebook/components/",
    C + "impact/",
    A + "impact/items/",
    A + "impact/groups/",
    C + "participation/",
    A + "participation/events/",
    A + "participation/summary/",
    C + "questionnaire/",
    C + "questionnaire/people/",
    C + "questionnaire/suggestions/",
    A + "questionnaire/",
    A + "questionnaire/people/",
    C + "contributions/",
    A + "contributions/",
    A + "contributions/credits/",
    C + "extensions/",
    A + "extensions/",
    C + "checkin/",
    A + "participation/checkin/",
    C + "questions/",
    C + "questions/mlsysim-quiz/",
    C + "grading/runs/{run}/",
    C + "regrades/",
    C + "regrades/?status=",
    C + "runs/",
    C + "jobs/",
    C + "lms/",
    C + "check/",
    C + "compute/budget/",
    C + "compute/cloud/",
    C + "compute/usage/",
    C + "slack/import/",
    C + "slack/deadlines/{assignment_id}/",
    C + "slack/deadlines/{assignment_id}/?cap=near",
    A + "slack/deadlines/{assignment_id}/",
    A + "runs/",
    A + "regrades/",
    A + "labs/",
    A + "question-sets/",
    A + "grading-runs/{run}/totals/",
    A + "incidents/course-wide/",
    A + "peer-review/rounds/{round}/assignments/",
    C + "questions/lab09-numbers/written/why-8pct/",
    A + "question-sets/lab09-numbers/written/why-8pct/",
    A + "question-sets/lab09-numbers/written/",
    # h70a: similarity checks (staff only)
    C + "integrity/",
    C + "integrity/{check}/",
    C + "integrity/{check}/pairs/{match}/",
    A + "similarity/",
    A + "similarity/{check}/pairs/",
]
# Pages that page through rows: their size must not grow with the course either.
BOUNDED_BYTES = 100_000


def _course(n: int, tag: str):  # type: ignore[no-untyped-def]
    cf = parse_course_file(COURSE_FILE.read_text(encoding="utf-8"))
    # Each size its own course from the same file (its own code; no compute: IPs are global).
    cf = cf.model_copy(
        update={"course": cf.course.model_copy(update={"code": f"ee290-{tag}"}), "compute": None}
    )
    course = course_load(cf=cf).course
    people = build_big_course(course, n, tag=tag)
    from apps.scribing import services as scribing

    # Every student 2 scribe duties, solved and published the week before the term (the solver
    # gives no new duty on a lecture already held).
    with time_machine.travel(dt.datetime(2026, 1, 12, 17, 0, tzinfo=dt.UTC), tick=True):
        scribing.solve(actor=None, course=course)
        with transaction.atomic():
            scribing.publish(actor=people["ta"], course=course)
    from apps.calendar.models import Milestone
    from apps.peerreview import services as peer

    draft = Milestone.objects.filter(course=course, name__icontains="draft").first()
    r = peer.round_create(
        actor=people["ta"],
        course=course,
        milestone_id=draft.pk,
        due_at=timezone.now() - dt.timedelta(days=1),
    )
    peer.preview(actor=people["ta"], course=course, round_id=r.pk)
    with transaction.atomic():
        peer.publish(actor=people["ta"], course=course, round_id=r.pk, without_drafts=True)
    # Checkoffs: a day of slots, every group but one booked, half of them with an outcome.
    from apps.checkoffs import services as checkoffs
    from apps.groups.models import Group

    s = checkoffs.set_create(
        actor=people["ta"], course=course, kind="checkin", title="Midterm check-in"
    )
    plans = checkoffs.slots_plan(
        course=course,
        day=dt.date(2030, 4, 30),
        start=dt.time(8),
        end=dt.time(20),
        minutes=10,
        location="Cory 258",
        staff_id=people["ta"].pk,
    )
    slots = checkoffs.slots_create(actor=people["ta"], course=course, set_id=s.pk, plans=plans)
    checkoffs.set_publish(actor=people["ta"], course=course, set_id=s.pk, published=True)
    groups = list(Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("pk"))
    for i, (slot, group) in enumerate(zip(slots, groups[:-1], strict=False)):
        b = checkoffs.book(
            actor=people["ta"], course=course, slot_id=slot.pk, for_group=group, notify=False
        )
        if i % 2:  # recorded once the slot has started, as outcomes are
            with time_machine.travel(slot.starts_at + dt.timedelta(minutes=1), tick=False):
                checkoffs.record(
                    actor=people["ta"],
                    course=course,
                    booking_id=b.pk,
                    attendance="present",
                    outcome="passed",
                )
    # The onboarding questionnaire, answered by every student.
    from apps.core.models import User
    from apps.onboarding.models import QuestionnaireResponse
    from apps.onboarding.services import questionnaire_setup

    questionnaire = questionnaire_setup(actor=None, course=course)
    QuestionnaireResponse.objects.bulk_create(
        QuestionnaireResponse(
            questionnaire=questionnaire, student=u, answers={"interests": ["Optimizers"], "gpu": 3}
        )
        for u in User.objects.filter(memberships__course=course, memberships__role="student")
    )
    # A pre/post quiz answered by every student (by CSV), both administrations.
    from apps.assessments import services as assessments
    from apps.autograder.bank import BANKS, bank_load

    quiz = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    a = assessments.create(actor=people["ta"], course=course, question_set_id=quiz.pk)
    for phase, right in (
        ("pre", "b,a,b,b,a,40,50,195,0.6,a,a,a"),
        ("post", "b,a,b,b,a,40,100,195,0.6,b,a,a"),
    ):
        rows = "Participant ID,q1,q2,q3,q4,q5,q6.1,q6.2,q7.1,q7.2,q8,q9,q10\n" + "".join(
            f"{100000 + i},{right}\n" for i in range(n)
        )
        imp = assessments.import_preview(
            actor=people["ta"],
            course=course,
            assessment_id=a.pk,
            phase=phase,
            filename=f"{phase}.csv",
            data=rows.encode(),
        )
        assessments.import_commit(
            actor=people["ta"], course=course, assessment_id=a.pk, import_id=imp.pk
        )
    # The quiz autograded as well: every student's answers, one pass released; a regrade request
    # from every tenth student; a run record from every group.
    from django.test import TestCase

    from apps.autograder.intake import answers_import
    from apps.autograder.models import RegradeRequest
    from apps.autograder.passes import release, run_create
    from apps.compute.models import RunRecord
    from tests.autograder.test_grading import quiz_csv

    students = list(
        User.objects.filter(memberships__course=course, memberships__role="student").order_by("pk")
    )
    answers_import(actor=people["ta"], question_set=quiz, data=quiz_csv(students), commit=True)
    with TestCase.captureOnCommitCallbacks(execute=True):
        run_create(actor=people["ta"], question_set=quiz)
    release(actor=people["ta"], question_set=quiz)
    first = quiz.questions.order_by("position").first()
    RegradeRequest.objects.bulk_create(
        RegradeRequest(question=first, student=u, reason="The key reads b.", old_points=0)
        for u in students[::10]
    )
    # Lab 09's written question answered by every student, each in their own words (the page
    # groups identical answers, so every answer is its own group here).
    from apps.autograder.services import answer_submit

    lab = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    why = lab.questions.get(key="why-8pct")
    for i, u in enumerate(students):
        answer_submit(actor=u, question=why, answers={0: f"Amdahl caps the gain ({i})."})
    RunRecord.objects.bulk_create(
        RunRecord(
            course=course,
            group=g,
            created_by=people["ta"],
            title=f"{g.name} baseline",
            repository="https://github.com/example/run",
            commit="0" * 40,
            config_text="lr: 3e-4",
            seed=7,
        )
        for g in Group.objects.filter(course=course, dissolved_at__isnull=True)
    )
    # Lab 09: every student locked steps 1 and 2, ran the instrument, reflected on step 1.
    from apps.labs.models import LabRecord, StepRecord

    records = LabRecord.objects.bulk_create(
        LabRecord(course=course, lab_key="lab09-perf-engr", student=u)
        for u in User.objects.filter(memberships__course=course, memberships__role="student")
    )
    now = timezone.now()
    StepRecord.objects.bulk_create(
        StepRecord(
            record=r,
            number=n,
            choice="B" if n == 1 else "",
            value=None if n == 1 else 30.0 + i % 20,
            figures={"improvement_pct": 8.7},
            ran_at=now,
            reflection_choice="A" if n == 1 else "",
            reflection_text="" if n == 1 else "AllReduce is the larger share of the step.",
            submitted_at=now,
        )
        for i, r in enumerate(records)
        for n in (1, 2)
    )
    _similarity_check(course, people["ta"])  # h70a
    return course, people


def _similarity_check(course, ta) -> None:  # type: ignore[no-untyped-def]
    """A finished similarity check: a file per group, each group paired with the next."""
    from apps.groups.models import Group
    from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile

    check = SimilarityCheck.objects.create(
        course=course,
        title="A2 code",
        source="folders",
        status="done",
        progress=100,
        inputs_hash="b" * 64,
        created_by=ta,
    )
    groups = list(Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("pk"))
    files = SubmittedFile.objects.bulk_create(
        SubmittedFile(
            check_run=check,
            group=g,
            submission=g.name,
            path="train.py",
            kind="code",
            language="python",
            sha256="0" * 64,
            text="def f(x):\n    return x\n" * 20,
        )
        for g in groups
    )
    SimilarityPair.objects.bulk_create(
        SimilarityPair(
            check_run=check,
            group_a=groups[i],
            group_b=groups[i + 1],
            percent=1 / (i + 2),
            percent_a=0.5,
            percent_b=0.5,
            file_a=files[i],
            file_b=files[i + 1],
            files=[
                {
                    "file_a": files[i].pk,
                    "file_b": files[i + 1].pk,
                    "percent_a": 0.5,
                    "percent_b": 0.5,
                    "slices_a": [[0, 30]],
                    "slices_b": [[0, 30]],
                }
            ],
        )
        for i in range(len(groups) - 1)
    )


def _measure(user, url: str) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    client.get(url)  # warm per-process caches (content types, templates)
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return len(ctx.captured_queries), len(response.content), response.status_code


@pytest.mark.parametrize("who", ["student", "ta"])
def test_queries_do_not_grow_with_the_course_and_pages_stay_small(who: str, celery_eager) -> None:  # type: ignore[no-untyped-def]
    small, small_people = _course(20, "small")
    large, large_people = _course(200, "big")
    urls = STUDENT_URLS if who == "student" else STAFF_URLS
    grew, heavy = [], []
    from apps.assessments.models import Assessment
    from apps.autograder.models import GradingRun
    from apps.calendar.models import Assignment
    from apps.checkoffs.models import CheckoffSet
    from apps.integrity.models import SimilarityCheck, SimilarityPair
    from apps.peerreview.models import PeerRound

    ids = {
        c.pk: {
            "set": CheckoffSet.objects.get(course=c).pk,
            "assessment": Assessment.objects.get(course=c).pk,
            "run": GradingRun.objects.get(question_set__course=c).pk,
            "round": PeerRound.objects.get(course=c).pk,
            "assignment_id": Assignment.objects.filter(course=c).order_by("due_at").first().pk,  # type: ignore[union-attr]
            "check": SimilarityCheck.objects.get(course=c).pk,
            "match": SimilarityPair.objects.filter(check_run__course=c).order_by("pk").first().pk,  # type: ignore[union-attr]
        }
        for c in (small, large)
    }
    for url in urls:
        q_small, _, _ = _measure(
            small_people[who],
            url.format(code=small.code, **ids[small.pk]),
        )
        q_large, size_large, _ = _measure(
            large_people[who],
            url.format(code=large.code, **ids[large.pk]),
        )
        if q_large > q_small:
            grew.append(f"{url}: {q_small} → {q_large} queries")
        if size_large > BOUNDED_BYTES:
            heavy.append(f"{url}: {size_large:,} bytes")
    assert not grew, "query count grows with the course:\n" + "\n".join(grew)
    assert not heavy, "pages over 100 KB at 200 students:\n" + "\n".join(heavy)


# The student pages of the read spike (#73, `bench/load.py`), with the shared cache on as in
# production: at most this many queries for a student, the same at both sizes. Lower a budget
# when a page needs fewer; never raise one. (On the 2,000-student course of
# bench/profile_pages.py #73 took the dashboard from 25 queries to 17, the node page from 11 to 6;
# keeping a student's Today between the writes that change it, the dashboard from 17 to 2.)
SPIKE_BUDGETS = {
    C: 3,
    C + "node/": 7,
    C + "slack/": 5,
    C + "questions/": 8,
    "/api/v1/courses/{code}/slack/me/": 4,
}


@pytest.mark.redis
def test_the_read_spikes_pages_keep_their_query_budget_with_the_cache_on(
    redis_cache, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    seen = {}
    for n, tag in ((20, "small"), (200, "big")):
        course, people = _course(n, tag)
        for url in SPIKE_BUDGETS:
            seen[url, n] = _measure(people["student"], url.format(code=course.code))[0]
    over = [
        f"{url} at {n} students: {q} > {SPIKE_BUDGETS[url]}"
        for (url, n), q in seen.items()
        if q > SPIKE_BUDGETS[url]
    ]
    assert not over, "over the read spike's query budget:\n" + "\n".join(over)


# Pages and lists a student or TA can open that the budgets above do not measure, each with why:
# they do not grow with the course (a person's own things, one object, a calculator), or what
# bounds them is said. A new page or list is measured above or named here.
NOT_BUDGETED = {
    "accounts/": "the person's own sign-in, password, SSH keys and tokens",
    "api/docs/": "the API's documentation",
    "api/v1/auth/tokens/": "the person's own tokens",
    "api/v1/me/ssh-keys/": "the person's own keys",
    "api/v1/courses/": "the person's own courses",
    "calc/": "the calculator: no course data",
    "c/<slug:code>/help/": "the same text for every course",
    "c/<slug:code>/group/": "staff get a pointer to the board",
    "c/<slug:code>/node/": "staff get a pointer to the compute board",
    "c/<slug:code>/assessments/<int:assessment_id>/take/": "one person's own quiz",
    "c/<slug:code>/assessments/<int:assessment_id>/demographics/": "one person's own form",
    "api/v1/courses/<slug:code>/assessments/<int:assessment_id>/mine/": "one person's answers",
    "c/<slug:code>/calendar/assignments/": "one assignment's edit page",
    "c/<slug:code>/calendar/lectures/": "one lecture's edit page",
    "c/<slug:code>/calendar/milestones/": "one milestone's edit page",
    "c/<slug:code>/groups/<int:group_id>/dissolve/": "one group's confirmation",
    "c/<slug:code>/compute/nodes/": "(power, agent) one node",
    "c/<slug:code>/compute/cloud/jobs/<int:op_id>/": "one cloud job and its calls",
    "c/<slug:code>/compute/cloud/sync/": "the project's inventory: one row per machine",
    "c/<slug:code>/compute/cloud/preflight/": "a read of the project: a row per check or finding",
    "c/<slug:code>/gradebook/students/<int:user_id>/": "one student's grades",
    "c/<slug:code>/checkin/sessions/<int:session_id>/screen/": "one session's code and count",
    "c/<slug:code>/roster/imports/<int:import_id>/": "a file's preview: 200 rows of each kind",
    "c/<slug:code>/gradebook/imports/<int:import_id>/": "a file's preview: 200 rows of each kind",
    "c/<slug:code>/slack/import/<int:import_id>/": "a file's preview: 200 rows of each kind",
    "c/<slug:code>/participation/imports/<int:import_id>/": "a file's preview: 200 rows",
}
AS_ROUTE = [
    ("{code}", "<slug:code>"),
    ("{set}", "<int:set_id>"),
    ("{assessment}", "<int:assessment_id>"),
    ("{run}", "<int:run_id>"),
    ("{round}", "<int:round_id>"),
    ("{assignment_id}", "<int:assignment_id>"),
    ("{check}", "<int:check_id>"),
    ("{match}", "<int:match_id>"),
    ("lab09-perf-engr", "<slug:lab>"),
    ("mlsysim-quiz", "<slug:key>"),
    ("lab09-numbers", "<slug:key>"),
    ("why-8pct", "<slug:qkey>"),
]


def _route(url: str) -> str:
    route = url.split("?")[0].lstrip("/")
    for literal, part in AS_ROUTE:
        route = route.replace(literal, part)
    return route


def test_every_page_and_list_a_role_opens_is_measured_or_named(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Every GET route of the URL conf, filled with the permission matrix's world and asked for
    as a student and a TA: each that answers 200 with a page or a JSON list is in the budgets
    above or in NOT_BUDGETED, so a list added tomorrow is measured at two sizes or says why not."""
    import json

    from tests.test_permissions_matrix import _url, all_routes
    from tests.world import build_world

    world = build_world(ee290_demo)
    measured = {
        "student_a": {_route(u) for u in STUDENT_URLS},
        "ta": {_route(u) for u in STAFF_URLS},
    }
    missing, lists = [], 0
    for role in ("student_a", "ta"):
        client = Client(raise_request_exception=False)
        client.force_login(world.people[role])
        for method, route in sorted(set(all_routes())):
            if method != "GET" or route.startswith("admin/"):
                continue
            response = client.get(_url(route, world))
            kind = response.get("Content-Type", "")
            if response.status_code != 200:
                continue
            if kind.startswith("application/json"):
                body = json.loads(response.content)
                if not (isinstance(body, list) or (isinstance(body, dict) and "results" in body)):
                    continue
            elif not kind.startswith("text/html"):
                continue
            lists += 1
            named = any(route.startswith(prefix) for prefix in NOT_BUDGETED)
            if route not in measured[role] and not named:
                missing.append(f"{role}: {route}")
    assert lists >= 150, lists  # the walk reached the pages and lists
    assert missing == [], "not measured and not named in NOT_BUDGETED:\n" + "\n".join(missing)
