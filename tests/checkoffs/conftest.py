import datetime as dt
from dataclasses import dataclass

import pytest
from django.utils import timezone

from apps.checkoffs import services
from apps.checkoffs.models import CheckoffSet, CheckoffSlot
from apps.core.models import Course, Role, User
from apps.groups.models import Group
from tests.factories import AssignmentFactory, CourseFactory, group_of, member


@pytest.fixture(autouse=True)
def _eager(celery_eager):  # type: ignore[no-untyped-def]
    """Bookings queue e-mails: run them in-process here."""
    return celery_eager


@pytest.fixture
def sent(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """`with sent(): …` runs what the block queued on commit (the e-mails) when it ends, as a
    real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@dataclass
class Signup:
    course: Course
    ta: User
    groups: list[Group]
    set: CheckoffSet
    slots: list[CheckoffSlot]  # three one-place 15-minute slots, two days from now, 521 Cory

    def student(self, i: int, k: int = 0) -> User:
        return self.groups[i].memberships.order_by("pk")[k].user


def make_signup(n_groups: int = 3, capacity: int = 1, course: Course | None = None) -> Signup:
    course = course or CourseFactory(location="521 Cory Hall")
    ta = member(course, Role.TA, full_name="Tara Assistant")
    groups = [group_of(course, 4, name=f"Team {i + 1}") for i in range(n_groups)]
    a1 = AssignmentFactory(course=course, code="A1")
    s = services.set_create(actor=ta, course=course, kind="assignment", assignment_id=a1.pk)
    day = (timezone.now() + dt.timedelta(days=2)).astimezone(course.tz).date()
    start = dt.datetime.combine(day, dt.time(14), tzinfo=course.tz).astimezone(
        dt.UTC
    )  # 2 PM, course time
    plans = services.single_plan(
        course=course,
        starts_at=start,
        ends_at=start + dt.timedelta(minutes=45),
        location="521 Cory Hall",
        capacity=capacity,
        staff_id=ta.pk,
    )
    slots = []
    for i in range(3):
        p = plans[0]
        one = services.single_plan(
            course=course,
            starts_at=p.starts_at + dt.timedelta(minutes=15 * i),
            ends_at=p.starts_at + dt.timedelta(minutes=15 * (i + 1)),
            location="521 Cory Hall",
            capacity=capacity,
            staff_id=ta.pk,
        )
        slots += services.slots_create(actor=ta, course=course, set_id=s.pk, plans=one)
    services.set_publish(actor=ta, course=course, set_id=s.pk, published=True)
    s.refresh_from_db()
    return Signup(course, ta, groups, s, slots)


@pytest.fixture
def signup(db) -> Signup:  # type: ignore[no-untyped-def]
    return make_signup()
