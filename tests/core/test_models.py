from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from apps.core.models import AuditEvent, Membership, Role, User
from apps.core.services import audit_record
from tests.factories import CourseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_emails_are_unique_whatever_their_case() -> None:
    User.objects.create_user("Ada@Uni.Example", "pw")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user("ada@uni.example", "pw")
    assert User.objects.get().email == "ada@uni.example"


def test_student_ids_are_unique_when_given_and_blank_is_allowed_many_times() -> None:
    UserFactory(sid="")
    UserFactory(sid="")
    UserFactory(sid="3031")
    with pytest.raises(IntegrityError), transaction.atomic():
        UserFactory(sid="3031")


def test_a_person_holds_one_role_per_course_but_others_elsewhere() -> None:
    user = UserFactory()
    ee, cs = CourseFactory(), CourseFactory()
    MembershipFactory(user=user, course=ee, role=Role.STUDENT)
    MembershipFactory(user=user, course=cs, role=Role.TA)
    with pytest.raises(IntegrityError), transaction.atomic():
        MembershipFactory(user=user, course=ee, role=Role.TA)
    assert Membership.objects.filter(user=user).count() == 2


def test_audit_events_cannot_be_edited_through_the_orm() -> None:
    with transaction.atomic():
        event = audit_record(actor=None, action="test.done")
    event.action = "test.rewritten"
    with pytest.raises(ValidationError, match="append-only"):
        event.save()


def test_audit_record_refuses_to_run_outside_a_transaction() -> None:
    # The test case's own atomic block must not count as the service's transaction: this call
    # runs inside pytest-django's wrapper only, as a service's late audit call would in production.
    with pytest.raises(RuntimeError, match="inside the service's transaction"):
        audit_record(actor=None, action="test.outside")
    with transaction.atomic():
        assert audit_record(actor=None, action="test.inside").pk


def test_audit_record_keeps_who_what_and_before_after() -> None:
    course = CourseFactory()
    actor = UserFactory()
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="course.renamed",
            course=course,
            obj=course,
            before={"title": "Old"},
            after={"title": "New"},
        )
    event = AuditEvent.objects.get()
    assert (event.actor, event.course, event.object_type) == (actor, course, "core.course")
    assert event.object_id == str(course.pk)
    assert (event.before, event.after) == ({"title": "Old"}, {"title": "New"})


@pytest.mark.postgres
def test_postgres_itself_refuses_to_change_or_delete_audit_rows() -> None:
    with transaction.atomic():
        audit_record(actor=None, action="test.done")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        AuditEvent.objects.update(action="test.rewritten")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get().action == "test.done"


@pytest.mark.postgres
def test_course_group_sizes_are_checked_by_the_database() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        CourseFactory(group_min_size=7, group_max_size=6)
