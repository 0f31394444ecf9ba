"""What the demo's people have done by the seventh week of the live term, so every page of a
first look has something true to show: slack spent and one late submission on the assignments
already due, scribe duties on the lectures to come (student01's next week), a peer-review round
open, and the A1 numbers graded and released while the A4 set is still open.

Each step goes through the same services staff and students use (the Gradescope lateness
import, the scribe solver, the pairing, a grading pass), once: a step whose result is already
there is skipped, so `load_demo` can run again after people have used the demo.
"""

from __future__ import annotations

import datetime as dt
import math
import random

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.autograder import passes
from apps.autograder import services as autograder
from apps.autograder.models import GradingRun, Question, QuestionSet, RegradeRequest
from apps.autograder.regrades import request_create
from apps.autograder.selectors import released_run, visible_grades
from apps.calendar.models import Assignment, Milestone
from apps.compute.board.incidents import incident_report, incident_update
from apps.compute.board.runs import run_record_create
from apps.compute.board.windows import window_request
from apps.compute.models import Allocation, Incident, SharingWindow
from apps.core.models import Course, Membership, Role, User
from apps.groups.models import Group, GroupMembership
from apps.labs import services as labs
from apps.labs.models import LabRecord
from apps.milestones.models import GroupMilestone
from apps.peerreview import services as peer
from apps.peerreview.models import PeerRound
from apps.scribing import services as scribing
from apps.setup.demo import DEMO_DOMAIN
from apps.slackdays.lateness import lateness_run, lateness_upload
from apps.slackdays.models import LatenessImport

GRADESCOPE_TIME = "%Y-%m-%d %H:%M:%S %z"


def _students(course: Course) -> list[User]:
    return [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .select_related("user")
        .order_by("user__email")
    ]


def demo_lateness(course: Course, ta: User) -> None:
    """The Gradescope export of each assignment already due, imported as a TA does: Tensor Cores
    (student01's group) handed A1 in 6 hours late and Pipeline Bubble A2 3 hours late (a slack
    day charged to each member), student33 A2 two days late (late work for staff to decide)."""
    if LatenessImport.objects.filter(course=course).exists():
        return
    students = _students(course)
    late: dict[str, dict[str, dt.timedelta]] = {
        "A1": {f"student{i:02d}@": dt.timedelta(hours=6) for i in range(1, 6)},
        "A2": {f"student{i:02d}@": dt.timedelta(hours=3) for i in range(21, 26)}
        | {"student33@": dt.timedelta(days=2, hours=3)},
    }
    now = timezone.now()
    rng = random.Random(10)  # noqa: S311 - seeded demo data, not a secret
    for a in Assignment.objects.filter(course=course, code__in=late).order_by("due_at"):
        if a.due_at + dt.timedelta(days=3) > now:
            continue  # not over yet (the demo loaded with the real dates, early in the term)
        lines = ["Name,SID,Email,Submission Time"]
        for s in students:
            delta = next(
                (d for prefix, d in late[a.code].items() if s.email.startswith(prefix)),
                -dt.timedelta(hours=rng.randint(1, 40)),
            )
            when = (a.due_at + delta).astimezone(course.tz).strftime(GRADESCOPE_TIME)
            lines.append(f"{s.get_full_name()},{s.sid},{s.email},{when}")
        record = lateness_upload(
            actor=ta,
            course=course,
            assignment_id=a.pk,
            filename=f"{a.code.lower()}-gradescope.csv",
            data=("\n".join(lines) + "\n").encode(),
        )
        lateness_run(actor=ta, record=record, commit=True)


def _next_week(course: Course) -> tuple[dt.date, dt.date]:
    today = timezone.localdate(timezone=course.tz)
    monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=1)
    return monday, monday + dt.timedelta(days=6)


def demo_scribing(course: Course, instructor: User) -> None:
    """Preferences from a few students (student01 asks for next week's first lecture), then the
    solver over the lectures still to come, published as staff do."""
    plan = scribing.plan_for(course)
    if plan.published_at:
        return
    upcoming = [lec for lec, _ in scribing.upcoming_lectures(course)]
    if len(upcoming) < 4:
        return  # the term is (nearly) over: nothing sensible to assign
    first, last = _next_week(course)
    wanted = next(
        (lec for lec in upcoming if first <= lec.starts_at.astimezone(course.tz).date() <= last),
        upcoming[0],
    )
    rng = random.Random(27)  # noqa: S311 - seeded demo data, not a secret
    others = [lec for lec in upcoming if lec.pk != wanted.pk]
    for i, s in enumerate(_students(course)):
        if i == 0:
            prefer = [wanted.pk]
        elif i % 3 == 0:
            prefer = [lec.pk for lec in rng.sample(others, min(2, len(others)))]
        else:
            continue
        scribing.preferences_save(student=s, course=course, cannot=[], prefer=prefer)
    result = scribing.solve(actor=instructor, course=course)
    if result.ok:
        scribing.publish(actor=instructor, course=course)


def demo_review_round(course: Course, instructor: User) -> None:
    """Peer review of the proposal drafts, due in four days at 23:59: the group that recorded
    no draft is left out, the others paired and told whom they review."""
    if PeerRound.objects.filter(course=course).exists():
        return
    milestone = (
        Milestone.objects.filter(course=course, tracked=True, due_at__lt=timezone.now())
        .order_by("-due_at")
        .first()
    )
    if milestone is None:
        return
    today = timezone.localdate(timezone=course.tz)
    due = dt.datetime.combine(today + dt.timedelta(days=4), dt.time(23, 59), tzinfo=course.tz)
    r = peer.round_create(
        actor=instructor, course=course, milestone_id=milestone.pk, due_at=due.astimezone(dt.UTC)
    )
    recorded = set(
        GroupMilestone.objects.filter(milestone=milestone, submitted_at__isnull=False).values_list(
            "group_id", flat=True
        )
    )
    for g in Group.objects.filter(course=course, dissolved_at__isnull=True).exclude(
        pk__in=recorded
    ):
        peer.exclude(
            actor=instructor, course=course, round_id=r.pk, group_id=g.pk, reason="no draft"
        )
    if peer.preview(actor=instructor, course=course, round_id=r.pk).ok:
        peer.publish(actor=instructor, course=course, round_id=r.pk)


def demo_question_sets(course: Course, instructor: User) -> None:
    """The A1 numbers as students answered them before A1 was due (most right, some slips),
    graded by a pass run here as a worker would, and released; the A4 set stays open."""
    qs = QuestionSet.objects.filter(course=course, key="a1-numbers").first()
    if qs is None or qs.released_at or GradingRun.objects.filter(question_set=qs).exists():
        return
    if qs.assignment and qs.assignment.due_at > timezone.now():
        return  # A1 is not due yet: its answers are still open
    rng = random.Random(1)  # noqa: S311 - seeded demo data, not a secret
    rows = []
    questions = list(qs.questions.order_by("position"))
    for s in _students(course):
        right = rng.uniform(0.5, 0.95)
        for q in questions:
            drawn = any(isinstance(v, dict) for v in (q.params or {}).values())
            keys = autograder.instance_for(q, s).keys if drawn else autograder.fixed_keys(q)
            for part, key in enumerate(keys):
                if math.isnan(key):  # a measurement: what the group's node gave
                    value = rng.uniform(560, 760)
                elif rng.random() < right:
                    value = key
                else:
                    value = key * rng.choice([0.5, 1.3, 8.0])
                rows.append((q, s.pk, part, f"{value:.4g}"))
    autograder.answers_bulk_upsert(rows, source="demo")
    run = passes.run_create(actor=instructor, question_set=qs)
    grading_pass = passes.latest_pass(run)
    if grading_pass is None:
        return
    for index in passes.pass_start(grading_pass.pk):
        passes.grade_pass_chunk(grading_pass.pk, index)
    passes.release(actor=instructor, question_set=qs)


def demo_requests(course: Course) -> None:
    """Two things for staff to decide on Today: student07 asks for Tensor Cores' node for a
    two-node run tomorrow night, and the first student who lost points on the A1 numbers asks for
    a regrade. Once."""
    if not SharingWindow.objects.filter(course=course).exists():
        requester = User.objects.filter(email__startswith="student07@").first()
        owner = Group.objects.filter(course=course, name="Tensor Cores").first()
        held = Allocation.objects.filter(group=owner, ended_at__isnull=True).first()
        if requester is not None and held is not None:
            tomorrow = timezone.localdate(timezone=course.tz) + dt.timedelta(days=1)
            start = dt.datetime.combine(tomorrow, dt.time(20), tzinfo=course.tz)
            window_request(
                actor=requester,
                course=course,
                node_ids=[held.node_id],
                starts_at=start.astimezone(dt.UTC),
                ends_at=(start + dt.timedelta(hours=10)).astimezone(dt.UTC),
                purpose="Two-node FSDP run for the A3 scaling plot",
            )
    qs = QuestionSet.objects.filter(
        course=course, key="a1-numbers", released_at__isnull=False
    ).first()
    if qs is None or RegradeRequest.objects.filter(question__question_set=qs).exists():
        return
    lost = (
        visible_grades(released_run(qs))
        .filter(score__lt=F("max_points"))
        .select_related("question", "student")
        .order_by("student__email", "question__position")
        .first()
    )
    if lost is not None:
        request_create(
            actor=lost.student,
            question=lost.question,
            reason="I used the exact ring formula from lecture 4; my working is in the notebook "
            "linked on Ed. Could you check whether the tolerance is too tight here?",
        )


def demo_extensions(course: Course) -> None:
    """Extension requests on A3 (due within the week): student12 asked for one day before a
    conference, which the course's rule approved at once; student21 asks for four days after a
    week with the flu, waiting for staff on Today. Once."""
    from apps.extensions.models import ExtensionRequest
    from apps.extensions.services import request_create

    a3 = Assignment.objects.filter(course=course, code="A3").first()
    if a3 is None or ExtensionRequest.objects.filter(course=course).exists():
        return
    if a3.release_at > timezone.now() or a3.due_at < timezone.now():
        return  # --keep-dates outside A3's weeks: nothing to ask about
    for email, days, reason in (
        ("student12@", 1, "I present a poster at MLSys on Friday and travel on Thursday."),
        ("student21@", 4, "I had the flu all last week (a doctor's note is with the DSP office)."),
    ):
        student = User.objects.filter(email__startswith=email).first()
        if student is not None:
            request_create(
                actor=student, course=course, days=days, reason=reason, assignment_id=a3.pk
            )


WHY_8PCT = [
    "Attention was only a small share of the step, so Amdahl's law caps the gain.",
    "attention was only a small share of the step,  so Amdahl's law caps the gain",
    "The hotspot was elsewhere (AllReduce). Profile the whole step first, then optimise the "
    "largest share.",
    "The benchmark was probably wrong.",
]


def demo_lab(course: Course) -> None:
    """Lab 09's first act as 30 of the students worked it (student01 and a few others have not
    started, so a visitor can): their locked predictions give the staff view its histograms, and
    their written answers to the lab bank's "why only 8 %?" wait for the TAs' rubric."""
    if LabRecord.objects.filter(course=course, lab_key="lab09-perf-engr").exists():
        return
    rng = random.Random(9)  # noqa: S311 - seeded demo data, not a secret
    key = "lab09-perf-engr"
    why = Question.objects.filter(
        question_set__course=course, question_set__key="lab09-numbers", key="why-8pct"
    ).first()
    for s in _students(course)[5:35]:
        guess = rng.choices("ABCD", weights=[3, 4, 1, 2])[0]
        labs.lock(actor=s, course=course, key=key, number=1, prediction=guess)
        labs.run(actor=s, course=course, key=key, number=1, inputs={})
        labs.submit(actor=s, course=course, key=key, number=1, choice=rng.choice("AAAAB"))
        value = round(rng.lognormvariate(math.log(25), 0.6), 1)  # most expect far too little
        labs.lock(actor=s, course=course, key=key, number=2, prediction=value)
        labs.run(actor=s, course=course, key=key, number=2, inputs={})
        labs.submit(
            actor=s,
            course=course,
            key=key,
            number=2,
            text=rng.choice(
                [
                    "AllReduce takes 45 % of the step, almost four times the attention kernel.",
                    "The same 3x applies to a much larger fraction, so Amdahl lets more through.",
                    "We should have profiled first: communication, not attention, was the hotspot.",
                    "I guessed attention dominated; the profile says the network does.",
                ]
            ),
        )
        if why is not None:
            autograder.answer_submit(
                actor=s,
                question=why,
                answers={0: rng.choice(WHY_8PCT)},
            )


def demo_infrastructure(course: Course, ta: User) -> None:
    """A course-wide incident the TA acknowledged (every student sees it on Today), and two run
    records of Tensor Cores, one for tomorrow night's window. Once."""
    if Incident.objects.filter(course=course, course_wide=True).exists():
        return
    owner = Group.objects.filter(course=course, name="Tensor Cores").first()
    held = Allocation.objects.filter(group=owner, ended_at__isnull=True).first()
    reporter = GroupMembership.objects.filter(group=owner, left_at__isnull=True).first()
    if held is None or reporter is None:
        return
    incident = incident_report(
        actor=reporter.user,
        course=course,
        node_id=held.node_id,
        occurred_at=timezone.now() - dt.timedelta(hours=5),
        summary="NCCL timeouts across nodes since this morning's network maintenance",
        job_ids="fsdp-a3-0412",
        logs="[rank3] NCCL WARN Net : Connection closed by remote peer",
        repro="torchrun --nnodes 2 train.py --config a3.yaml",
    )
    incident_update(
        actor=ta,
        course=course,
        incident_id=incident.pk,
        status=Incident.Status.ACKNOWLEDGED,
        note="GCP is rolling back a firewall change; multi-node runs may time out until 6 pm.",
        course_wide=True,
    )
    window = SharingWindow.objects.filter(course=course).order_by("pk").first()
    for title, commit, seed, w in (
        ("1-node FSDP baseline, bs 256", "3f9c2a1e7b", 1234, None),
        ("2-node FSDP for the A3 scaling plot", "8d41b0c9aa", 1234, window),
    ):
        run_record_create(
            actor=reporter.user,
            course=course,
            data={
                "title": title,
                "repository": "https://github.com/tensor-cores/ee290-project",
                "commit": commit,
                "config_text": "model: llama-3-8b\nglobal_batch: 256\nseq_len: 4096\n",
                "seed": seed,
                "artifacts": "gs://tensor-cores-runs/" + commit,
                "nodes": held.node.name,
                "window": w.pk if w is not None else None,
            },
        )


def demo_activity(*, course: Course) -> None:
    """Everything above, as the demo people would have done it by now (`load_demo` runs it after
    `demo_load`; the test fixture `ee290_demo` leaves it out so tests start from a quiet term)."""
    emails = [f"instructor@{DEMO_DOMAIN}", f"ta1@{DEMO_DOMAIN}"]
    staff = {u.email.split("@")[0]: u for u in User.objects.filter(email__in=emails)}
    if {"instructor", "ta1"} - set(staff):
        return
    with transaction.atomic():
        demo_lateness(course, staff["ta1"])
        demo_scribing(course, staff["instructor"])
        demo_review_round(course, staff["instructor"])
        demo_question_sets(course, staff["instructor"])
        demo_requests(course)
        demo_extensions(course)
        demo_lab(course)
        demo_infrastructure(course, staff["ta1"])
