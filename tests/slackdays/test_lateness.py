from __future__ import annotations

import datetime as dt
import zoneinfo
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.core.errors import Conflict
from apps.core.models import Role
from apps.slackdays.lateness import lateness_run, lateness_upload
from apps.slackdays.models import LateWork, LedgerEntry, SlackAccount
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = pytest.mark.django_db
PT = zoneinfo.ZoneInfo("America/Los_Angeles")
DUE = dt.datetime(2026, 3, 7, 23, 59, tzinfo=PT)  # the evening before the clocks change
HEADER = "First Name,Last Name,SID,Email,Total Score,Status,Submission ID,Submission Time,Lateness (H:M:S)\n"


def stamp(t: dt.datetime) -> str:
    return t.astimezone(PT).strftime("%Y-%m-%d %H:%M:%S %z")


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a = AssignmentFactory(
        course=course, code="A3", due_at=DUE, release_at=DUE - dt.timedelta(days=14)
    )
    late_group, on_time_group = group_of(course, 3, "Late"), group_of(course, 2, "Punctual")
    solo = member(course, email="solo@uni.edu")
    staff = member(course, Role.INSTRUCTOR)
    return course, a, late_group, on_time_group, solo, staff


def export(late_group, on_time_group, solo) -> bytes:  # type: ignore[no-untyped-def]
    rows = [HEADER]
    for m in late_group.memberships.all():  # a group submission lists each member, 20 h late
        rows.append(
            f"A,B,{m.user.sid},{m.user.email},10,Graded,1,{stamp(DUE + dt.timedelta(hours=20))},20:00:00\n"
        )
    for m in on_time_group.memberships.all():
        rows.append(
            f"C,D,,{m.user.email.upper()},10,Graded,2,{stamp(DUE - dt.timedelta(hours=1))},00:00:00\n"
        )
    rows.append(
        f"E,F,,{solo.email},10,Graded,3,{stamp(DUE + dt.timedelta(hours=30))},30:00:00\n"
    )  # beyond one day
    return "".join(rows).encode()


def run(course, a, staff, data: bytes, commit: bool = True):  # type: ignore[no-untyped-def]
    record = lateness_upload(
        actor=staff, course=course, assignment_id=a.pk, filename="a3.csv", data=data
    )
    return lateness_run(actor=staff, record=record, commit=commit)


def test_covered_lateness_charges_the_group_once_and_later_work_is_listed(world) -> None:  # type: ignore[no-untyped-def]
    course, a, late, punctual, solo, staff = world
    report = run(course, a, staff, export(late, punctual, solo))
    results = [o.result for o in report.outcomes]
    assert results.count("charged") == 1  # the first member's row charges the whole group
    assert results.count("already_covered") == 2
    assert results.count("on_time") == 2
    assert results.count("late_not_covered") == 1
    for m in late.memberships.all():
        assert SlackAccount.objects.get(student=m.user).balance == 2
    lw = LateWork.objects.get()
    assert lw.student == solo
    assert "slack covers at most 1 day" in lw.why
    entry = LedgerEntry.objects.filter(kind="spend").first()
    assert entry.actor == staff and "Gradescope" in entry.reason  # noqa: PT018


def test_reimporting_the_same_file_changes_nothing(world) -> None:  # type: ignore[no-untyped-def]
    course, a, late, punctual, solo, staff = world
    data = export(late, punctual, solo)
    run(course, a, staff, data)
    before = (LedgerEntry.objects.count(), LateWork.objects.count())
    report = run(course, a, staff, data)
    assert (LedgerEntry.objects.count(), LateWork.objects.count()) == before
    assert "charged" not in [o.result for o in report.outcomes]
    assert sorted(lw.student.email for lw in LateWork.objects.all()) == [
        solo.email
    ]  # matches the file


def test_no_balance_becomes_late_work_naming_who_is_out(world) -> None:  # type: ignore[no-untyped-def]
    from apps.slackdays.services import slack_adjust

    course, a, late, punctual, solo, staff = world
    broke = late.memberships.first().user
    slack_adjust(actor=staff, course=course, student_id=broke.pk, delta=-3, reason="used up")
    run(course, a, staff, export(late, punctual, solo))
    reasons = {lw.student.email: lw.why for lw in LateWork.objects.all()}
    assert len(reasons) == 4  # the 3 late members + solo
    assert f"{broke.get_full_name()} has no slack days left" in reasons[broke.email]


def test_preview_changes_nothing(world) -> None:  # type: ignore[no-untyped-def]
    course, a, late, punctual, solo, staff = world
    report = run(course, a, staff, export(late, punctual, solo), commit=False)
    assert report.summary()["charged"] == 1
    assert LedgerEntry.objects.count() == 0
    assert LateWork.objects.count() == 0


def test_problems_are_reported_by_row_and_block_the_commit(world) -> None:  # type: ignore[no-untyped-def]
    course, a, _late, _punctual, solo, staff = world
    data = (
        HEADER
        + f"X,Y,,ghost@uni.edu,1,Graded,9,{stamp(DUE)},0\n"
        + f"X,Y,,{solo.email},1,Graded,9,yesterday,0\n"
    ).encode()
    report = run(course, a, staff, data, commit=False)
    assert report.problems == [
        "row 3, column 'Submission Time': 'yesterday' is not a timestamp with a UTC offset (e.g. "
        "2026-02-11 08:30:12 -0800)",
        "row 2: no student of this course with email ghost@uni.edu or SID —",
    ]
    with pytest.raises(Conflict, match="2 problem"):
        run(course, a, staff, data)
    missing = run(course, a, staff, b"Name,Score\nA,1\n", commit=False)
    assert missing.problems == [
        "row 1: no Email or SID column",
        "row 1: no 'Submission Time' column",
    ]


def test_two_thousand_rows_import(world) -> None:  # type: ignore[no-untyped-def]
    course, a, _late, _punctual, _solo, staff = world
    students = [member(course, email=f"s{i}@uni.edu") for i in range(2000)]
    data = (
        HEADER
        + "".join(
            f"A,B,,{s.email},1,Graded,{i},{stamp(DUE - dt.timedelta(minutes=i))},0\n"
            for i, s in enumerate(students)
        )
    ).encode()
    report = run(course, a, staff, data)
    assert report.summary() == {"on_time": 2000, "problems": 0}


def test_the_command(world, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    course, _a, late, punctual, solo, _staff = world
    path = tmp_path / "a3.csv"
    path.write_bytes(export(late, punctual, solo))
    out = StringIO()
    call_command("import_lateness", course.code, "a3", str(path), stdout=out)
    assert "Preview only" in out.getvalue()
    assert LedgerEntry.objects.count() == 0
    call_command("import_lateness", course.code, "A3", str(path), "--commit", stdout=StringIO())
    assert LedgerEntry.objects.filter(kind="spend").count() == 3
    with pytest.raises(CommandError, match="No assignment"):
        call_command("import_lateness", course.code, "A9", str(path))


def test_staff_decide_on_late_work_and_it_is_audited(world) -> None:  # type: ignore[no-untyped-def]
    from apps.core.errors import DomainError, NotAllowed
    from apps.core.models import AuditEvent
    from apps.slackdays.services import late_work_decide

    course, a, late, punctual, solo, staff = world
    run(course, a, staff, export(late, punctual, solo))
    lw = LateWork.objects.get()
    with pytest.raises(NotAllowed):
        late_work_decide(actor=solo, course=course, late_work_id=lw.pk, status="exception")
    with pytest.raises(DomainError, match="Status must be one of"):
        late_work_decide(actor=staff, course=course, late_work_id=lw.pk, status="forgiven")
    late_work_decide(actor=staff, course=course, late_work_id=lw.pk, status="left")
    lw.refresh_from_db()
    assert lw.status == "left"
    assert AuditEvent.objects.get(action="late_work.decided").after == {"status": "left"}
