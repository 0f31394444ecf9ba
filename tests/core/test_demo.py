from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.core.models import Membership, Role, User
from apps.groups.models import Group, GroupMembership

pytestmark = pytest.mark.django_db


def test_demo_people_and_groups(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    roles = {r: Membership.objects.filter(course=ee290_demo, role=r).count() for r in Role}
    assert roles == {Role.INSTRUCTOR: 1, Role.TA: 2, Role.STUDENT: 40}
    sizes = sorted(g.memberships.filter(left_at__isnull=True).count() for g in Group.objects.all())
    assert sizes == [5] * 8
    assert User.objects.filter(is_demo=False).count() == 0
    student = User.objects.get(email="student01@example.edu")
    assert student.check_password("courseops-demo")


def test_running_the_demo_loader_again_changes_nothing(ee290_demo, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    before = (User.objects.count(), Group.objects.count(), GroupMembership.objects.count())
    out = StringIO()
    call_command("load_demo", "ee290-sp26", stdout=out)
    assert (User.objects.count(), Group.objects.count(), GroupMembership.objects.count()) == before
    assert "student01@example.edu" in out.getvalue()
    assert "courseops-demo" in out.getvalue()


def test_demo_accounts_are_refused_when_debug_is_off(ee290, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("load_demo", "ee290-sp26", stdout=StringIO())
    assert User.objects.count() == 0


def test_demo_needs_the_course_first(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    with pytest.raises(CommandError, match="run load_course"):
        call_command("load_demo", "nope", stdout=StringIO())


def test_no_migration_creates_people() -> None:
    # Demo people come only from the demo loader, never from migrations.
    assert User.objects.count() == 0
