from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.core.errors import Conflict, NotAllowed
from apps.core.models import AuditEvent, Membership, Role, User
from apps.groups.models import GroupMembership
from apps.roster.models import RosterImport
from apps.roster.services import roster_commit, roster_upload
from tests.factories import CourseFactory, GroupFactory, GroupMembershipFactory, UserFactory, member

pytestmark = pytest.mark.django_db

GOOD = b"name,email,sid,role\nAda Okafor,ada@uni.edu,3031,student\nBo Li,bo@uni.edu,3032,student\nTim,tim@uni.edu,,ta\n"


def upload_and_commit(course, staff, data: bytes):  # type: ignore[no-untyped-def]
    record, preview = roster_upload(actor=staff, course=course, filename="r.csv", data=data)
    return record, preview, roster_commit(actor=staff, record=record)


def test_preview_then_commit_adds_everyone() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    record, preview = roster_upload(actor=staff, course=course, filename="r.csv", data=GOOD)
    assert preview.summary() == {
        "added": 3,
        "updated": 0,
        "unchanged": 0,
        "dropped": 0,
        "problems": 0,
    }
    assert Membership.objects.filter(course=course).count() == 1  # preview changed nothing
    roster_commit(actor=staff, record=record)
    roles = dict(Membership.objects.filter(course=course).values_list("user__email", "role"))
    assert roles == {
        staff.email: "instructor",
        "ada@uni.edu": "student",
        "bo@uni.edu": "student",
        "tim@uni.edu": "ta",
    }
    ada = User.objects.get(email="ada@uni.edu")
    assert (ada.full_name, ada.sid, ada.has_usable_password()) == ("Ada Okafor", "3031", False)
    assert AuditEvent.objects.get(action="roster.imported").after["added"] == 3


def test_reimporting_the_same_file_changes_nothing() -> None:
    course = CourseFactory()
    staff = member(course, Role.TA)
    upload_and_commit(course, staff, GOOD)
    before = list(Membership.objects.order_by("pk").values_list("pk", "role", "is_active"))
    _, preview, _ = upload_and_commit(course, staff, GOOD)
    assert preview.summary() == {
        "added": 0,
        "updated": 0,
        "unchanged": 3,
        "dropped": 0,
        "problems": 0,
    }
    assert list(Membership.objects.order_by("pk").values_list("pk", "role", "is_active")) == before
    assert User.objects.count() == 4


def test_a_file_with_one_bad_row_changes_nothing() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    bad = GOOD + b"Cy,,3033,student\n"
    record, preview = roster_upload(actor=staff, course=course, filename="r.csv", data=bad)
    assert [str(p) for p in preview.problems] == ["row 5, column 'email': missing email"]
    with pytest.raises(Conflict, match="1 problem"):
        roster_commit(actor=staff, record=record)
    assert User.objects.count() == 1
    assert Membership.objects.filter(course=course).count() == 1


def test_dropped_students_become_inactive_and_leave_their_group() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    upload_and_commit(course, staff, GOOD)
    bo = User.objects.get(email="bo@uni.edu")
    group = GroupFactory(course=course)
    GroupMembershipFactory(group=group, user=bo)
    _, preview, _ = upload_and_commit(
        course, staff, b"name,email,sid,role\nAda Okafor,ada@uni.edu,3031,student\n"
    )
    assert [c.email for c in preview.dropped] == ["bo@uni.edu"]
    m = Membership.objects.get(course=course, user=bo)
    assert m.is_active is False
    assert GroupMembership.objects.get(user=bo).left_at is not None
    assert User.objects.filter(email="bo@uni.edu").exists()  # never deleted
    assert Membership.objects.get(
        course=course, user__email="tim@uni.edu"
    ).is_active  # staff are not dropped


def test_role_name_and_sid_updates_and_reactivation() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    upload_and_commit(course, staff, GOOD)
    Membership.objects.filter(user__email="bo@uni.edu").update(is_active=False)
    data = b"name,email,sid,role\nAda O. Okafor,ada@uni.edu,3031,ta\nBo Li,bo@uni.edu,3032,student\nTim,tim@uni.edu,,ta\n"
    _, preview, _ = upload_and_commit(course, staff, data)
    changes = {c.email: c.what for c in preview.updated}
    assert changes == {
        "ada@uni.edu": "role student → ta; name 'Ada Okafor' → 'Ada O. Okafor'",
        "bo@uni.edu": "re-activated",
    }
    assert Membership.objects.get(user__email="ada@uni.edu").role == "ta"


def test_a_sid_that_belongs_to_someone_else_is_a_problem() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    UserFactory(email="other@uni.edu", sid="3031")
    _, preview = roster_upload(actor=staff, course=course, filename="r.csv", data=GOOD)
    assert [str(p) for p in preview.problems] == [
        "row 2, column 'sid': SID 3031 belongs to another account (other@uni.edu)"
    ]


def test_existing_people_from_another_course_are_reused() -> None:
    course, other = CourseFactory(), CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    ada = member(other, email="ada@uni.edu")
    _, preview, _ = upload_and_commit(course, staff, GOOD)
    assert {c.email: c.what for c in preview.added}["ada@uni.edu"] == "added to the course"
    assert Membership.objects.filter(user=ada).count() == 2


def test_committing_twice_is_refused() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    record, _, _ = upload_and_commit(course, staff, GOOD)
    with pytest.raises(Conflict, match="already committed"):
        roster_commit(actor=staff, record=RosterImport.objects.get(pk=record.pk))


def test_students_cannot_import() -> None:
    course = CourseFactory()
    with pytest.raises(NotAllowed):
        roster_upload(actor=member(course), course=course, filename="r.csv", data=GOOD)


def test_the_command_previews_then_commits(tmp_path: Path) -> None:
    course = CourseFactory(code="cs-test")
    member(course, Role.INSTRUCTOR)
    path = tmp_path / "roster.csv"
    path.write_bytes(GOOD)
    out = StringIO()
    call_command("import_roster", "cs-test", str(path), stdout=out)
    assert "added 3" in out.getvalue() and "--commit" in out.getvalue()  # noqa: PT018
    assert Membership.objects.filter(course=course).count() == 1
    call_command("import_roster", "cs-test", str(path), "--commit", stdout=StringIO())
    assert Membership.objects.filter(course=course).count() == 4
    path.write_bytes(GOOD + b"x,,,\n")
    with pytest.raises(CommandError, match="2 problem"):  # missing email, blank role
        call_command(
            "import_roster", "cs-test", str(path), "--commit", stdout=StringIO(), stderr=StringIO()
        )


def test_enrolled_students_have_their_slack_days_from_the_first_day() -> None:
    """The roster import publishes StudentsEnrolled: each student's slack account opens with the
    course's allowance in the import's transaction (a TA gets none), so the deadline hour's
    first spend only locks rows."""
    from apps.slackdays.models import SlackAccount

    course = CourseFactory(slack_days_allowance=3)
    staff = member(course, Role.INSTRUCTOR)
    upload_and_commit(course, staff, GOOD)
    opened = dict(
        SlackAccount.objects.filter(course=course).values_list("student__email", "balance")
    )
    assert opened == {"ada@uni.edu": 3, "bo@uni.edu": 3}
    upload_and_commit(course, staff, GOOD)  # importing again leaves the accounts as they are
    assert SlackAccount.objects.filter(course=course).count() == 2
