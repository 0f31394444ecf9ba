"""Every factory in one place."""

from __future__ import annotations

import datetime as dt

import factory
from django.utils import timezone

from apps.calendar.models import Assignment, Lecture, Milestone
from apps.compute.models import Node, StaticIP
from apps.core.models import Course, Membership, Role, User
from apps.groups.models import Group, GroupMembership

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"person{n}@uni.example")
    full_name = factory.Faker("name")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # type: ignore[no-untyped-def]
        if create:
            obj.save()


class CourseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Course

    code = factory.Sequence(lambda n: f"cs{n:03d}-sp26")
    title = factory.Sequence(lambda n: f"Course {n}")
    term = "Spring 2026"
    timezone = "America/Los_Angeles"
    reminder_hours = factory.LazyFunction(lambda: [48, 6])


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    course = factory.SubFactory(CourseFactory)
    role = Role.STUDENT


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Assignment

    course = factory.SubFactory(CourseFactory)
    code = factory.Sequence(lambda n: f"A{n + 1}")
    title = factory.Sequence(lambda n: f"Assignment {n + 1}")
    release_at = factory.LazyFunction(lambda: timezone.now() - dt.timedelta(days=7))
    due_at = factory.LazyFunction(lambda: timezone.now() + dt.timedelta(days=7))


class MilestoneFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Milestone

    course = factory.SubFactory(CourseFactory)
    key = factory.Sequence(lambda n: f"milestone-{n}")
    name = factory.Sequence(lambda n: f"Milestone {n}")
    due_at = factory.LazyFunction(lambda: timezone.now() + dt.timedelta(days=10))


class LectureFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Lecture

    course = factory.SubFactory(CourseFactory)
    number = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Lecture {n + 1}")
    starts_at = factory.LazyFunction(lambda: timezone.now() + dt.timedelta(days=1))
    ends_at = factory.LazyAttribute(lambda o: o.starts_at + dt.timedelta(minutes=90))


class GroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Group

    course = factory.SubFactory(CourseFactory)
    name = factory.Sequence(lambda n: f"Group {n}")


class GroupMembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GroupMembership

    group = factory.SubFactory(GroupFactory)
    course = factory.SelfAttribute("group.course")
    user = factory.SubFactory(UserFactory)


class NodeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Node

    course = factory.SubFactory(CourseFactory)
    name = factory.Sequence(lambda n: f"node-{n}")
    gcp_project = "test-project"
    zone = "us-central1-a"
    internal_ip = factory.Sequence(lambda n: f"10.0.{n // 250}.{n % 250 + 1}")


class StaticIPFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StaticIP

    course = factory.SubFactory(CourseFactory)
    address = factory.Sequence(lambda n: f"198.51.{100 + n // 250}.{n % 250 + 1}")
    resource_name = factory.Sequence(lambda n: f"ip-{n}")
    region = "us-central1"


def member(course: Course, role: Role = Role.STUDENT, **user_kwargs: object) -> User:
    """A new user with `role` in `course`."""
    user = UserFactory(**user_kwargs)
    MembershipFactory(user=user, course=course, role=role)
    return user


def open_course(**kwargs: object) -> Course:
    """A course whose group formation deadline is a week away."""
    course = CourseFactory(**kwargs)
    MilestoneFactory(
        course=course,
        key="group-formation",
        name="Group formation",
        due_at=timezone.now() + dt.timedelta(days=7),
    )
    return course


def group_of(course: Course, size: int, name: str | None = None) -> Group:
    group = GroupFactory(course=course, **({"name": name} if name else {}))
    for _ in range(size):
        GroupMembershipFactory(group=group, user=member(course))
    return group


def compute_inventory(course: Course, n: int) -> None:
    """`n` ready nodes and `n` IPs in us-central1."""
    for _ in range(n):
        NodeFactory(course=course)
        StaticIPFactory(course=course)
