"""A course of N students in groups of 5, built in bulk: for query budgets at two sizes and for
the page benchmark (bench/bench_pages.py builds 2,000 students in 400 groups with it)."""

from __future__ import annotations

from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.utils import timezone

from apps.calendar.models import Assignment, Milestone
from apps.core.lifecycle import StudentsEnrolled, publish
from apps.core.models import Course, Membership, Role, User
from apps.extensions.models import ExtensionRequest
from apps.groups.models import Group, GroupMembership
from apps.milestones.models import GroupMilestone
from apps.slackdays.models import DeadlineException


def build_big_course(
    course: Course, n_students: int, *, tag: str = "", password: str = "x"
) -> dict[str, User]:
    """`n_students` active students, in groups of 5 named "Group 0001"…, a TA and an
    instructor, one extension per 10 students (so exception reads grow with the course) and one
    open extension request per 10 (so the staff queue does)."""
    hashed = make_password(password)
    users = User.objects.bulk_create(
        [
            User(email=f"s{i:05d}{tag}@big.example", full_name=f"Student {i:05d}", password=hashed)
            for i in range(n_students)
        ],
        batch_size=2000,
    )
    Membership.objects.bulk_create(
        [Membership(user=u, course=course, role=Role.STUDENT) for u in users], batch_size=2000
    )
    with transaction.atomic():  # as a roster import enrols them: slack accounts open now
        publish(
            StudentsEnrolled(
                course=course, actor=None, at=timezone.now(), user_ids=tuple(u.pk for u in users)
            )
        )
    staff = {}
    for role in (Role.TA, Role.INSTRUCTOR):
        u = User.objects.create(
            email=f"{role}{tag}@big.example", full_name=f"The {role}", password=hashed
        )
        Membership.objects.create(user=u, course=course, role=role)
        staff[str(role)] = u
    groups = [Group(course=course, name=f"Group {i:04d}") for i in range(n_students // 5)]
    for g in groups:  # join codes come from the field default, one per instance
        g.join_code = Group._meta.get_field("join_code").get_default()
    groups = Group.objects.bulk_create(groups, batch_size=1000)
    GroupMembership.objects.bulk_create(
        [
            GroupMembership(group=groups[i // 5], course=course, user=u)
            for i, u in enumerate(users[: len(groups) * 5])
        ],
        batch_size=2000,
    )
    granter = staff[str(Role.INSTRUCTOR)]
    DeadlineException.objects.bulk_create(
        [
            DeadlineException(
                course=course,
                kind="accommodation",
                hours=24,
                student=u,
                reason="DSP letter",
                granted_by=granter,
            )
            for u in users[::10]
        ],
        batch_size=2000,
    )
    assignment = Assignment.objects.filter(course=course).order_by("due_at").first()
    if assignment is not None:  # one open extension request per 10 students: staff's queue grows
        ExtensionRequest.objects.bulk_create(
            [
                ExtensionRequest(
                    course=course,
                    student=u,
                    assignment=assignment,
                    days=2,
                    reason="A conference trip that week.",
                )
                for u in users[5::10]
            ],
            batch_size=2000,
        )
    first = Milestone.objects.filter(course=course, tracked=True).order_by("due_at").first()
    if first is not None:  # every other group has recorded the first milestone
        GroupMilestone.objects.bulk_create(
            [
                GroupMilestone(
                    course=course,
                    milestone=first,
                    group=g,
                    link="https://example.edu/r",
                    submitted_at=first.due_at,
                    submitted_by=users[i * 5],
                )
                for i, g in enumerate(groups)
                if i % 2
            ],
            batch_size=2000,
        )
    if connection.vendor == "postgresql":
        # A live database has statistics; a bulk-loaded one has none until autovacuum runs,
        # and PostgreSQL then plans joins as if every table held one row (a 0.1 ms lookup took
        # 6 ms in bench/profile_pages.py). Benchmarks measure the app, not missing statistics.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return {"student": users[0], "ta": staff[str(Role.TA)], "instructor": granter}
