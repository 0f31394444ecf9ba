"""One course with an object of every kind, owned by two different groups, and a person in every
role: what the permission matrix and the schema fuzzer try every route against.

Group A's student (`student_a`) and group B's student (`student_b`) are in different groups;
group A has an approved sharing window on group C's node, an incident, an answer set; staff of
another course
(`outsider`) belong to a second course. `ids` holds, for each URL parameter name, the id of
*group A's* object (what student B must not reach) and `ids_b` group B's own.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.assessments.models import Assessment, ResponseImport
from apps.assessments.services import create as assessment_create
from apps.autograder.models import (
    AnswerUpload,
    GradingRun,
    QuestionSet,
    RegradeRequest,
    RubricItem,
)
from apps.calendar.models import Assignment, Lecture, Milestone
from apps.checkoffs.models import Booking, CheckoffSet, CheckoffSlot
from apps.compute.board.incidents import incident_report
from apps.compute.board.windows import window_approve, window_request
from apps.compute.models import Allocation, NodeMove, ShutdownOptOut, SshKey
from apps.contributions.models import QuestionProposal
from apps.core.models import Course, Role, User
from apps.core.tokens import token_create
from apps.gradebook.models import ScoreImport
from apps.gradebook.services import score_change, scores_apply
from apps.groups.models import Group
from apps.impact.models import ImpactItem
from apps.milestones.services import milestone_submit
from apps.onboarding.models import GroupSuggestion, QuestionnaireResponse
from apps.onboarding.services import questionnaire_setup
from apps.participation.models import ParticipationEvent, ParticipationImport
from apps.peerreview.models import PeerAssignment, PeerRound
from apps.roster.services import roster_upload
from apps.scribing.models import ScribeDuty, ScribeSwap
from apps.slackdays.lateness import lateness_upload
from apps.slackdays.models import LateWork
from apps.slackdays.services import exception_grant
from tests.factories import CourseFactory, member


@dataclass
class World:
    course: Course
    other_course: Course
    people: dict[str, User | None]
    group_a: Group
    group_b: Group
    ids: dict[str, Any] = field(default_factory=dict)
    ids_b: dict[str, Any] = field(default_factory=dict)
    secrets_of_a: list[str] = field(default_factory=list)


def _extension_request(course: Course, student: User, assignment: Any) -> int:
    """Student A's open extension request, with a supporting document (SECRET-EXTENSION-A)."""

    from apps.extensions.models import ExtensionRequest

    r = ExtensionRequest(
        course=course,
        student=student,
        assignment=assignment,
        days=2,
        reason="Student A's reason for an extension (SECRET-EXTENSION-A).",
    )
    r.document, r.document_kind = b"%PDF-1.4 student A's note", "pdf"
    r.save()
    return r.pk


def _similarity(course: Course, group_a: Group, group_b: Group, ta: User) -> dict[str, int]:
    """A finished similarity check (staff only) in which groups A and B share a file
    (SECRET-SIMILARITY-A is group A's code: students never see it)."""
    from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile

    check = SimilarityCheck.objects.create(
        course=course,
        title="A1 code",
        source="folders",
        status="done",
        progress=100,
        inputs_hash="world" + "0" * 59,
        stats={"groups": 2, "files": 2, "pairs": 1, "flagged": 1},
        created_by=ta,
    )
    text = "def f(x):\n    return x + 1  # SECRET-SIMILARITY-A\n"
    fa, fb = (
        SubmittedFile.objects.create(
            check_run=check,
            group=g,
            submission=g.name,
            path="a.py",
            kind="code",
            language="python",
            sha256="0" * 64,
            text=text,
        )
        for g in (group_a, group_b)
    )
    pair = SimilarityPair.objects.create(
        check_run=check,
        group_a=group_a,
        group_b=group_b,
        percent=1.0,
        percent_a=1.0,
        percent_b=1.0,
        file_a=fa,
        file_b=fb,
        files=[
            {
                "file_a": fa.pk,
                "file_b": fb.pk,
                "percent_a": 1.0,
                "percent_b": 1.0,
                "slices_a": [[0, 20]],
                "slices_b": [[0, 20]],
            }
        ],
    )
    return {"check_id": check.pk, "match_id": pair.pk}


def _checkin(course: Course, student: User, ta: User) -> dict[str, int]:
    """Student A's check-in to the first lecture (its session long closed)."""
    from apps.calendar.models import Lecture
    from apps.participation.models import Checkin, CheckinSession

    lecture = Lecture.objects.filter(course=course).order_by("starts_at").first()
    assert lecture is not None
    session = CheckinSession.objects.create(
        course=course,
        lecture=lecture,
        secret="world-secret",
        opened_by=ta,
        opened_at=lecture.starts_at,
        closes_at=lecture.ends_at,
    )
    c = Checkin.objects.create(session=session, student=student, at=lecture.starts_at)
    return {"checkin_session_id": session.pk, "checkin_id": c.pk}


def build_world(course: Course) -> World:
    """`course` is the EE 290 course with the demo people loaded (the `ee290_demo` fixture)."""
    groups = list(Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name"))
    group_a, group_b, group_c = groups[0], groups[1], groups[2]
    a_members = [
        m.user for m in group_a.memberships.filter(left_at__isnull=True).select_related("user")
    ]
    b_members = [
        m.user for m in group_b.memberships.filter(left_at__isnull=True).select_related("user")
    ]
    instructor = User.objects.get(email="instructor@example.edu")
    ta = User.objects.get(email="ta1@example.edu")
    other_course = CourseFactory(code="other-sp26")
    outsider = member(other_course, Role.INSTRUCTOR)

    alloc_a = Allocation.objects.get(group=group_a, ended_at__isnull=True)
    alloc_b = Allocation.objects.get(group=group_b, ended_at__isnull=True)
    alloc_c = Allocation.objects.get(group=group_c, ended_at__isnull=True)
    c_member = group_c.memberships.filter(left_at__isnull=True).first().user  # type: ignore[union-attr]
    start = timezone.now() + dt.timedelta(days=2)
    with transaction.atomic():
        # A borrows C's node (approved by C): student B is in neither group.
        window = window_request(
            actor=a_members[0],
            course=course,
            node_ids=[alloc_c.node_id],
            starts_at=start,
            ends_at=start + dt.timedelta(hours=4),
            purpose="multi-node run",
        )
        window_approve(actor=c_member, course=course, window_id=window.pk)
        window_b = window_request(
            actor=b_members[0],
            course=course,
            node_ids=[alloc_a.node_id],
            starts_at=start + dt.timedelta(days=3),
            ends_at=start + dt.timedelta(days=3, hours=2),
        )
    incident = incident_report(
        actor=a_members[0],
        course=course,
        node_id=alloc_a.node_id,
        occurred_at=timezone.now() - dt.timedelta(hours=1),
        summary="NCCL timeout SECRET-INCIDENT-A",
        logs="SECRET-LOG-A",
    )
    incident_b = incident_report(
        actor=b_members[0],
        course=course,
        node_id=alloc_b.node_id,
        occurred_at=timezone.now() - dt.timedelta(hours=1),
        summary="OOM on B",
    )
    roster, _ = roster_upload(
        actor=instructor,
        course=course,
        filename="roster.csv",
        data=b"name,email,sid,role\nNew Person,new.person@example.edu,99,student\n",
    )
    assignment = Assignment.objects.filter(course=course).order_by("due_at").first()
    assert assignment is not None
    lateness = lateness_upload(
        actor=instructor,
        course=course,
        assignment_id=assignment.pk,
        filename="late.csv",
        data=b"Name,SID,Email,Submission Time,Lateness (H:M:S)\n",
    )
    (extension,) = exception_grant(
        actor=instructor,
        course=course,
        kind="extension",
        hours=24,
        reason="illness",
        assignment_id=assignment.pk,
        student_ids=[a_members[0].pk],
    )
    late_work = LateWork.objects.create(
        course=course,
        assignment=assignment,
        student=a_members[0],
        submitted_at=assignment.due_at + dt.timedelta(days=3),
        late_by=dt.timedelta(days=3),
        why="submitted 3 days after the deadline",
    )
    qs = QuestionSet.objects.filter(course=course).order_by("pk").first()
    assert qs is not None
    run = GradingRun.objects.create(
        question_set=qs, key_version="world", expected=0, created_by=instructor
    )

    first_milestone = (
        Milestone.objects.filter(course=course, tracked=True).order_by("due_at").first()
    )
    assert first_milestone is not None
    milestone_submit(
        actor=a_members[0],
        course=course,
        milestone_id=first_milestone.pk,
        link="https://example.edu/SECRET-DRAFT-A",
        ai_used=False,
    )
    # Scribing: student A's duty, and a swap A offered to a student of group C (not B).
    lectures = list(Lecture.objects.filter(course=course).order_by("starts_at")[:8])
    duty = ScribeDuty.objects.create(
        course=course,
        lecture=lectures[0],
        student=a_members[0],
        due_at=lectures[0].starts_at + dt.timedelta(days=7),
    )
    c_member = group_c.memberships.filter(left_at__isnull=True).first().user
    c_duty = ScribeDuty.objects.create(
        course=course,
        lecture=lectures[6],
        student=c_member,
        due_at=lectures[6].starts_at + dt.timedelta(days=7),
    )
    swap = ScribeSwap.objects.create(
        course=course, duty=duty, proposer=a_members[0], other=c_member, other_duty=c_duty
    )
    # Peer review: a published round in which group A reviews group C.
    draft = Milestone.objects.filter(course=course).order_by("due_at").last()
    peer_round = PeerRound.objects.create(
        course=course,
        milestone=draft,
        due_at=timezone.now() + dt.timedelta(days=3),
        published_at=timezone.now(),
    )
    peer_assignment = PeerAssignment.objects.create(
        round=peer_round, reviewer=group_a, reviewee=group_c
    )
    # Checkoffs: a published sign-up whose one-place slot group A holds, with a staff note.
    checkoff_set = CheckoffSet.objects.create(
        course=course,
        kind="assignment",
        title="A1 checkoff",
        assignment=assignment,
        published_at=timezone.now(),
    )
    slot_start = timezone.now() + dt.timedelta(days=4)
    slot = CheckoffSlot.objects.create(
        set=checkoff_set,
        starts_at=slot_start,
        ends_at=slot_start + dt.timedelta(minutes=15),
        location="521 Cory Hall",
        capacity=1,
        staff=ta,
        booked=1,
    )
    booking = Booking.objects.create(
        set=checkoff_set,
        slot=slot,
        group=group_a,
        booked_by=a_members[0],
        notes="SECRET-CHECKOFF-NOTE-A",
    )
    quiz = QuestionSet.objects.get(course=course, key="mlsysim-quiz")
    assessment: Assessment = assessment_create(
        actor=instructor, course=course, question_set_id=quiz.pk
    )
    batch = ResponseImport.objects.create(
        assessment=assessment,
        phase="pre",
        filename="pre.csv",
        uploaded_by=instructor,
        data=b"Participant ID,q1\n123456,b\n",
        report={"rows": 1, "problems": []},
    )
    upload = AnswerUpload.objects.create(
        question_set=qs,
        uploaded_by=instructor,
        filename="answers.csv",
        data=b"email,q1\n",
        rows=0,
        status=AnswerUpload.Status.PREVIEWED,
        report={"answers": 0, "students": 0},
    )
    score_import = ScoreImport.objects.create(
        course=course,
        filename="scores.csv",
        uploaded_by=instructor,
        content=b"email,participation\n",
    )
    with transaction.atomic():
        scores_apply(
            actor=ta,
            course=course,
            changes=[
                score_change(
                    course=course,
                    component_key="participation",
                    percent="77",
                    note="SECRET-SCORE-NOTE-A",
                    group_id=group_a.pk,
                )
            ],
        )
    impact_item = ImpactItem.objects.create(
        course=course,
        group=group_a,
        kind="arxiv",
        url="https://arxiv.org/abs/2601.00001",
        happened_on=dt.date(2026, 5, 1),
        claim="SECRET-IMPACT-CLAIM-A",
        added_by=a_members[0],
    )
    participation_import = ParticipationImport.objects.create(
        course=course, filename="p.csv", uploaded_by=instructor, content=b"email,kind,date\n"
    )
    participation_event = ParticipationEvent.objects.create(
        course=course,
        student=a_members[0],
        kind="comment",
        occurred_on=dt.date(2026, 2, 3),
        note="SECRET-PARTICIPATION-A",
    )
    proposal = QuestionProposal.objects.create(
        course=course,
        proposer=a_members[0],
        kind="numeric",
        answer="2*n",
        prompt="SECRET-PROPOSAL-A: what is twice {n}?",
        params_text="n = 4",
        params={"n": 4},
    )
    proposal.authors.set([a_members[0]])
    questionnaire_setup(actor=instructor, course=course)
    suggestion = GroupSuggestion.objects.create(
        course=course, groups=[[u.pk for u in a_members]], created_by=instructor
    )
    QuestionnaireResponse.objects.update_or_create(
        questionnaire=course.questionnaire,
        student=a_members[0],
        defaults={"answers": {"notes": "SECRET-ONBOARDING-NOTE-A"}},
    )
    people: dict[str, User | None] = {
        "anonymous": None,
        "student_a": a_members[0],
        "student_b": b_members[0],
        # A student of the course in no group, after formation closed (a late enrolment): the
        # walks see the pages that work per group as such a student meets them.
        "student_solo": member(course, Role.STUDENT, full_name="Sol Unplaced"),
        "ta": ta,
        "instructor": instructor,
        "outsider": outsider,
    }
    from apps.compute.models import CloudOp, ComputePolicy

    ComputePolicy.objects.update_or_create(course=course, defaults={"groups_may_power": True})
    # A few days of running time, so the budget page draws its burn-down in every walk.
    from apps.compute.models import NodeStatusChange

    now = timezone.now()
    NodeStatusChange.objects.bulk_create(
        [
            NodeStatusChange(
                node_id=alloc_a.node_id, status="RUNNING", at=now - dt.timedelta(days=3)
            ),
            NodeStatusChange(
                node_id=alloc_b.node_id, status="RUNNING", at=now - dt.timedelta(days=2)
            ),
            NodeStatusChange(
                node_id=alloc_b.node_id, status="TERMINATED", at=now - dt.timedelta(days=1)
            ),
        ]
    )
    cloud_op = CloudOp.objects.create(
        course=course,
        kind="start",
        node_id=alloc_a.node_id,
        target=f"start:{alloc_a.node_id}",
        status="failed",
        reason="403 FORBIDDEN",
        why="world",
    )
    ids = {
        "code": course.code,
        "op_id": cloud_op.pk,
        "group_id": group_a.pk,
        "user_id": a_members[1].pk,
        "allocation_id": alloc_a.pk,
        "node_id": alloc_a.node_id,
        "window_id": window.pk,
        "incident_id": incident.pk,
        "run_id": run.pk,
        "import_id": roster.pk,
        "lateness_import_id": lateness.pk,
        "exception_id": extension.pk,
        "late_id": late_work.pk,
        "token_id": token_create(user=a_members[0], name="student A's script")[0].pk,
        "request_id": RegradeRequest.objects.create(
            question=qs.questions.order_by("position").first(),
            student=a_members[0],
            reason="Student A's reason for a regrade.",
            old_points=0,
        ).pk,
        "extension_request_id": _extension_request(course, a_members[0], extension.assignment),
        **_checkin(course, a_members[0], ta),
        "ssh_key_id": SshKey.objects.create(
            user=a_members[0],
            kind="ssh-ed25519",
            bits=256,
            fingerprint="SHA256:student-A-world-key",
            public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStudentAWorldKey",
            label="student A's laptop",
        ).pk,
        "key": qs.key,
        "opt_out_id": ShutdownOptOut.objects.create(
            course=course,
            group=group_a,
            night=(now + dt.timedelta(days=3)).date(),
            reason="Group A's long run (SECRET-OPT-OUT-A).",
            requested_by=a_members[0],
            requested_at=now,
        ).pk,
        "move_id": NodeMove.objects.create(
            course=course,
            group=group_a,
            from_node_id=alloc_a.node_id,
            requested_by=a_members[0],
            status=NodeMove.Status.DECLINED,
            note="Group A's node is back (SECRET-MOVE-NOTE-A).",
        ).pk,
        # The shipped Lab 09 bank's written question and one of its rubric items.
        "written_key": "lab09-numbers",
        "written_qkey": "why-8pct",
        "rubric_item_id": RubricItem.objects.get(
            question__question_set__course=course,
            question__question_set__key="lab09-numbers",
            key="small-share",
        ).pk,
        "assignment_id": assignment.pk,
        "lecture_id": course.lectures.order_by("number").first().pk,  # type: ignore[union-attr]
        "milestone_id": first_milestone.pk,
        "upload_id": upload.pk,
        "duty_id": duty.pk,
        "round_id": peer_round.pk,
        "pair_id": peer_assignment.pk,
        "swap_id": swap.pk,
        "set_id": checkoff_set.pk,
        "slot_id": slot.pk,
        "booking_id": booking.pk,
        "assessment_id": assessment.pk,
        "batch_id": batch.pk,
        "score_import_id": score_import.pk,
        "impact_item_id": impact_item.pk,
        "suggestion_id": suggestion.pk,
        "question_id": course.questionnaire.questions.order_by("pk").first().pk,  # type: ignore[union-attr]
        "proposal_id": proposal.pk,
        "participation_import_id": participation_import.pk,
        "participation_event_id": participation_event.pk,
    }
    ids_b = {
        **ids,
        "group_id": group_b.pk,
        "user_id": b_members[1].pk,
        "allocation_id": alloc_b.pk,
        "node_id": alloc_b.node_id,
        "window_id": window_b.pk,
        "incident_id": incident_b.pk,
    }
    ids.update(_similarity(course, group_a, group_b, ta))  # h70a
    secrets = [
        group_a.join_code,
        "SECRET-INCIDENT-A",
        "SECRET-LOG-A",
        "SECRET-DRAFT-A",
        "SECRET-CHECKOFF-NOTE-A",
        "SECRET-SCORE-NOTE-A",
        "SECRET-IMPACT-CLAIM-A",
        "SECRET-ONBOARDING-NOTE-A",
        "SECRET-PROPOSAL-A",
        "SECRET-PARTICIPATION-A",
        "SECRET-EXTENSION-A",
        "SECRET-SIMILARITY-A",
        alloc_a.static_ip.address,
        *(u.email for u in a_members[1:]),
    ]
    return World(
        course=course,
        other_course=other_course,
        people=people,
        group_a=group_a,
        group_b=group_b,
        ids=ids,
        ids_b=ids_b,
        secrets_of_a=secrets,
    )
