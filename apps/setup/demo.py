"""Demo people for a first look: 1 instructor, 2 TAs, 40 students in 8 groups of 5.

Only `manage.py load_demo` calls this (never a migration). Every account is marked `is_demo`
and shares one documented password. Idempotent: re-running finds the same people and groups.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone

from apps.assessments import services as assessments
from apps.assessments.models import Assessment
from apps.autograder.bank import demo_banks_load
from apps.autograder.models import QuestionSet
from apps.calendar.models import Assignment, Milestone
from apps.checkoffs import services as checkoffs
from apps.checkoffs.models import CheckoffSet
from apps.compute.board.formation import allocate_at_formation
from apps.core.lifecycle import StudentsEnrolled, publish
from apps.core.models import Course, Membership, Role, User
from apps.core.services import audit_record
from apps.gradebook import services as gradebook
from apps.gradebook.models import ScoreEntry
from apps.groups.models import Group, GroupMembership
from apps.milestones.models import GroupMilestone
from apps.onboarding import defaults as onboarding_defaults
from apps.onboarding import services as onboarding
from apps.onboarding.models import EnrollmentDecision, Questionnaire, QuestionnaireResponse
from apps.participation import services as participation

DEMO_PASSWORD = "courseops-demo"  # noqa: S105 - documented demo credential, demo accounts only
DEMO_DOMAIN = "example.edu"
COURSE_APPS = ("coursecalendar", "groups", "compute", "perfcalc", "autograder", "milestones")

STUDENT_NAMES = [
    "Ada Okafor",
    "Bruno Silva",
    "Chen Wei",
    "Dana Levi",
    "Elif Kaya",
    "Farah Haddad",
    "Gabriel Costa",
    "Hana Sato",
    "Ivan Petrov",
    "Jasmine Patel",
    "Kofi Mensah",
    "Lena Fischer",
    "Mateo Rossi",
    "Nadia Rahman",
    "Omar Aziz",
    "Priya Nair",
    "Quinn Murphy",
    "Rosa Martinez",
    "Sven Larsen",
    "Tara Singh",
    "Umar Farouk",
    "Vera Novak",
    "Wen Zhao",
    "Ximena Torres",
    "Yusuf Demir",
    "Zara Ahmed",
    "Aiden Brooks",
    "Bea Lindqvist",
    "Caleb Nguyen",
    "Diya Sharma",
    "Emeka Obi",
    "Freya Hansen",
    "Goran Ilic",
    "Hiro Tanaka",
    "Isla Campbell",
    "Jonah Weiss",
    "Kira Ivanova",
    "Luca Bianchi",
    "Maya Cohen",
    "Nikhil Rao",
]
GROUP_NAMES = [
    "Tensor Cores",
    "Warp Drive",
    "Flash Attention",
    "Ring Reduce",
    "Pipeline Bubble",
    "KV Cache",
    "Mixed Precision",
    "Roofline",
]


@dataclass(frozen=True)
class DemoLogin:
    role: str
    email: str
    name: str


def _person(email: str, name: str, sid: str, password_hash: str) -> User:
    user = User.objects.filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, full_name=name, sid=sid, is_demo=True)
        user.password = password_hash  # hashed once for all 43: PBKDF2 is slow on purpose
        user.save(update_fields=["password"])
    return user


def _demo_milestones(course: Course, groups: list[tuple[Group, User]]) -> None:
    """The first two tracked milestones recorded by the new demo groups: most on time, one late,
    one not at all, so the staff board has something to show."""
    for m in Milestone.objects.filter(course=course, tracked=True).order_by("due_at")[:2]:
        for i, (group, first) in enumerate(groups):
            if i == len(groups) - 1:
                continue  # the last group never records it
            when = m.due_at + (
                dt.timedelta(hours=5) if i == len(groups) - 2 else -dt.timedelta(days=1)
            )
            GroupMilestone.objects.get_or_create(
                milestone=m,
                group=group,
                defaults={
                    "course": course,
                    "link": f"https://docs.example.edu/{group.pk}/{m.key}",
                    "submitted_at": when,
                    "submitted_by": first,
                },
            )


def _demo_checkoffs(course: Course, staff: User) -> None:
    """A published checkoff sign-up for the latest assignment: an afternoon of 15-minute slots on
    the next weekday (relative to today, so a first look can book), three groups booked, student01's
    Tensor Cores among them. Once."""
    assignment = Assignment.objects.filter(course=course).order_by("-due_at").first()
    if assignment is None or CheckoffSet.objects.filter(course=course).exists():
        return
    s = checkoffs.set_create(
        actor=staff, course=course, kind="assignment", assignment_id=assignment.pk
    )
    day = timezone.now().astimezone(course.tz).date() + dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    plans = checkoffs.slots_plan(
        course=course,
        day=day,
        start=dt.time(13),
        end=dt.time(16),
        minutes=15,
        location=course.location or "Office hours room",
        staff_id=staff.pk,
        break_start=dt.time(14, 30),
        break_end=dt.time(14, 45),
    )
    slots = checkoffs.slots_create(actor=staff, course=course, set_id=s.pk, plans=plans)
    checkoffs.set_publish(actor=staff, course=course, set_id=s.pk, published=True)
    # Three groups booked, student01's first (their Today page shows the booking).
    groups = sorted(
        Group.objects.filter(course=course, dissolved_at__isnull=True),
        key=lambda g: (g.name != GROUP_NAMES[0], g.name),
    )[:3]
    for slot, group in zip(slots[::3], groups, strict=False):
        checkoffs.book(actor=staff, course=course, slot_id=slot.pk, for_group=group, notify=False)


def _demo_assessment(course: Course, staff: User) -> None:
    """The MLSys·im quiz as a pre/post assessment with 40 imported responses each way (random
    participant IDs, two NO RESEARCH), so the report has something to draw. Once."""
    quiz = QuestionSet.objects.filter(course=course, key="mlsysim-quiz").first()
    if quiz is None or Assessment.objects.filter(course=course).exists():
        return
    a = assessments.create(
        actor=staff, course=course, question_set_id=quiz.pk, title="MLSys·im tutorial: pre/post"
    )
    rng = random.Random(290)  # noqa: S311 - seeded demo data, not a secret
    keys = {"q1": "b", "q2": "a", "q3": "b", "q4": "b", "q5": "a", "q8": "b", "q9": "a", "q10": "a"}
    wrong = {
        "q1": "a",
        "q2": "b",
        "q3": "a",
        "q4": "c",
        "q5": "b",
        "q8": "a",
        "q9": "d",
        "q10": "c",
    }
    codes = [f"{rng.randrange(100000, 999999)}" for _ in range(42)]
    for phase, p_right, who in (("pre", 0.45, codes[:40]), ("post", 0.8, codes[2:])):
        lines = ["Participant ID,q1,q2,q3,q4,q5,q6.1,q6.2,q7.1,q7.2,q8,q9,q10"]
        for i, code in enumerate(who):
            pick = {k: v if rng.random() < p_right else wrong[k] for k, v in keys.items()}
            q6 = (
                ("40", "100")
                if rng.random() < p_right
                else rng.choice([("40", "50"), ("80", "100")])
            )
            q7 = (
                ("195", "0.6")
                if rng.random() < p_right
                else rng.choice([("195000", "600"), ("300", "0.5")])
            )
            ident = f"{code} NO RESEARCH" if i in (3, 17) else code
            lines.append(
                ",".join(
                    [
                        ident,
                        *(pick[k] for k in ("q1", "q2", "q3", "q4", "q5")),
                        *q6,
                        *q7,
                        pick["q8"],
                        pick["q9"],
                        pick["q10"],
                    ]
                )
            )
        imp = assessments.import_preview(
            actor=staff,
            course=course,
            assessment_id=a.pk,
            phase=phase,
            filename=f"demo-{phase}.csv",
            data=("\n".join(lines) + "\n").encode(),
        )
        assessments.import_commit(actor=staff, course=course, assessment_id=a.pk, import_id=imp.pk)


def _demo_grades(course: Course, staff: User) -> None:
    """Scores for the gradebook, entered as a TA would: the project's technical score and the
    assignments' written part per group, enhancements per student, and participation events
    (attendance, Ed, comments), with one student attending a third of the lectures, so the
    at-risk list has someone. Impact and scribing stay open. Once."""
    if ScoreEntry.objects.filter(course=course).exists():
        return
    rng = random.Random(2026)  # noqa: S311 - seeded demo data, not a secret
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    # Per group: the project's technical score, and the written part of the assignments so far
    # (the staff part of Core / working, as a TA would import it from Gradescope).
    by_group = "group,project-technical,assignments-core\n" + "".join(
        f"{g.name},{rng.randint(72, 96)},{rng.randint(70, 98)}\n" for g in groups
    )
    emails = list(
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .order_by("user__email")
        .values_list("user__email", flat=True)
    )
    rows = [f"{email},{rng.randint(60, 100)}" for i, email in enumerate(emails) if i % 4]
    by_student = "email,assignments-enhancements\n" + "\n".join(rows) + "\n"
    for name, data in (("demo-project.csv", by_group), ("demo-enhancements.csv", by_student)):
        record, _ = gradebook.import_upload(
            actor=staff, course=course, filename=name, data=data.encode()
        )
        gradebook.import_commit(actor=staff, course=course, import_id=record.pk)
    # Participation as a TA records it: attendance at the lectures held so far (most students at
    # most of them; student05 at a third) and a few Ed posts, answers and comments each.
    days = [
        lec.starts_at.astimezone(course.tz).date()
        for lec in course.lectures.filter(starts_at__lt=timezone.now()).order_by("number")
    ]
    if not days:
        return
    lines = ["email,kind,date,note"]
    for email in emails:
        share = 0.3 if email.startswith("student05@") else rng.uniform(0.85, 1.0)
        lines += [f"{email},attendance,{day}," for day in days if rng.random() < share]
        lines += [
            f"{email},{rng.choice(['ed-post', 'ed-answer', 'comment'])},{rng.choice(days)},"
            for _ in range(rng.randint(2, 8))
        ]
    events, _ = participation.import_upload(
        actor=staff,
        course=course,
        filename="demo-participation.csv",
        data=("\n".join(dict.fromkeys(lines)) + "\n").encode(),  # no row twice: that is refused
    )
    participation.import_commit(actor=staff, course=course, import_id=events.pk)


def _demo_questionnaire(course: Course, staff: User) -> None:
    """The onboarding questionnaire with 36 of the 40 students' answers (as they were in January:
    interests, time, experience, and teammate wishes naming people who ended up in their group),
    an enrollment decision for each who answered. Once."""
    if Questionnaire.objects.filter(course=course).exists():
        return
    q = onboarding.questionnaire_setup(actor=staff, course=course)
    rng = random.Random(120)  # noqa: S311 - seeded demo data, not a secret
    rows = (
        GroupMembership.objects.filter(course=course, left_at__isnull=True)
        .select_related("user")
        .order_by("user__email")
    )
    mates: dict[int, list[str]] = {}
    for m in rows:
        mates.setdefault(m.group_id, []).append(m.user.email)
    responses, decisions = [], []
    for i, m in enumerate(rows):
        if i % 10 == 9:
            continue  # four students never answered: the reminder has someone to reach
        others = [e for e in mates[m.group_id] if e != m.user.email]
        answers = {
            "interests": rng.sample(onboarding_defaults.RESEARCH_DIRECTIONS, rng.randint(1, 3)),
            "hours": rng.choice(["8–12", "12–16", "over 16"]),
            "gpu": rng.randint(1, 5),
            "distributed": rng.randint(1, 4),
            "teammates": sorted(rng.sample(others, min(len(others), rng.randint(0, 2)))),
        }
        responses.append(QuestionnaireResponse(questionnaire=q, student=m.user, answers=answers))
        decisions.append(
            EnrollmentDecision(course=course, student=m.user, decision="admitted", decided_by=staff)
        )
    QuestionnaireResponse.objects.bulk_create(responses)
    EnrollmentDecision.objects.bulk_create(decisions)


def demo_logins(*, course: Course) -> list[DemoLogin]:
    """The course's demo accounts as they are now (instructors, TAs, students), to print again."""
    order = {Role.INSTRUCTOR: 0, Role.TA: 1, Role.STUDENT: 2}
    rows = Membership.objects.filter(course=course, user__is_demo=True, is_active=True)
    return [
        DemoLogin(role=Role(m.role).label, email=m.user.email, name=m.user.full_name)
        for m in sorted(
            rows.select_related("user"), key=lambda m: (order[Role(m.role)], m.user.email)
        )
    ]


def demo_load(*, course: Course) -> list[DemoLogin]:
    """Create (or find) the demo people, their roles and 8 groups of 5. Returns the logins."""
    logins: list[DemoLogin] = []
    with transaction.atomic():
        people = [("instructor", "Instructor Demo", Role.INSTRUCTOR, "")]
        people += [(f"ta{i}", f"TA Demo {i}", Role.TA, "") for i in (1, 2)]
        people += [
            (f"student{i:02d}", name, Role.STUDENT, f"3036{i:05d}")
            for i, name in enumerate(STUDENT_NAMES, start=1)
        ]
        students: list[User] = []
        password_hash = make_password(DEMO_PASSWORD)
        for local, name, role, sid in people:
            user = _person(f"{local}@{DEMO_DOMAIN}", name, sid, password_hash)
            Membership.objects.update_or_create(
                user=user, course=course, defaults={"role": role, "is_active": True}
            )
            logins.append(DemoLogin(role=role.label, email=user.email, name=user.full_name))
            if role == Role.STUDENT:
                students.append(user)
            elif role == Role.INSTRUCTOR and not user.is_staff:
                # The admin is where staff edit lectures and deadlines until pages exist.
                user.is_staff = True
                user.save(update_fields=["is_staff"])
                user.user_permissions.set(
                    Permission.objects.filter(content_type__app_label__in=COURSE_APPS)
                )

        publish(
            StudentsEnrolled(
                course=course, actor=None, at=timezone.now(), user_ids=tuple(s.pk for s in students)
            )
        )
        # A group is keyed by its first student, not its name: once that student has been in
        # any group of the course (the demo ran before; people renamed, left, merged since),
        # the loader leaves that group alone instead of fighting what users did.
        touched = set(
            GroupMembership.objects.filter(course=course, user__in=students).values_list(
                "user_id", flat=True
            )
        )
        fresh: list[tuple[Group, User]] = []
        for g, group_name in enumerate(GROUP_NAMES):
            five = students[g * 5 : g * 5 + 5]
            if not five or five[0].pk in touched:
                continue
            group, _ = Group.objects.get_or_create(course=course, name=group_name)
            fresh.append((group, five[0]))
            for user in five:
                if user.pk not in touched:
                    GroupMembership.objects.create(group=group, course=course, user=user)
        _demo_milestones(course, fresh)
        # Every demo group holds a node and an IP: the formation allocation, run by the
        # instructor (so the beat task finds it done and e-mails nobody again).
        instructor = User.objects.get(email=f"instructor@{DEMO_DOMAIN}")
        allocate_at_formation(actor=instructor, course=course)
        demo_banks_load(course=course)  # the MLSys·im quiz and an assignment-style set
        _demo_checkoffs(course, User.objects.get(email=f"ta1@{DEMO_DOMAIN}"))
        _demo_assessment(course, instructor)
        _demo_grades(course, User.objects.get(email=f"ta1@{DEMO_DOMAIN}"))
        _demo_questionnaire(course, instructor)
        audit_record(
            actor=None,
            action="demo.loaded",
            course=course,
            obj=course,
            after={"people": len(people), "groups": len(GROUP_NAMES)},
        )
    return logins
