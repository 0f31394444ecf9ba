"""load_course: validate first, write all or nothing, re-run without duplicates."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.calendar.models import Assignment, CourseEvent, Lecture, Milestone, RecessDay
from apps.compute.models import Node, StaticIP
from apps.core.models import AuditEvent, Course, GradingComponent

pytestmark = pytest.mark.django_db
MODELS = (
    Course,
    Lecture,
    RecessDay,
    Assignment,
    Milestone,
    CourseEvent,
    GradingComponent,
    Node,
    StaticIP,
)


def counts() -> dict[str, int]:
    return {m.__name__: m.objects.count() for m in MODELS}


def run(path: Path) -> str:
    out = StringIO()
    call_command("load_course", str(path), stdout=out, stderr=out)
    return out.getvalue()


def test_loading_twice_gives_the_same_rows(tmp_path: Path, course_file_text: str) -> None:
    path = tmp_path / "course.yaml"
    path.write_text(course_file_text)
    first = run(path)
    after_first = counts()
    second = run(path)
    assert after_first == counts()
    assert after_first == {
        "Course": 1,
        "Lecture": 26,
        "RecessDay": 2,
        "Assignment": 5,
        "Milestone": 8,
        "CourseEvent": 6 + 13,
        "GradingComponent": 8,
        "Node": 8,
        "StaticIP": 8,
    }
    assert "lectures            26  (created 26" in first
    assert "Already up to date; nothing changed." in second
    assert AuditEvent.objects.filter(action="course.loaded").count() == 1


def test_a_moved_deadline_is_updated_in_place(tmp_path: Path, course_file_text: str) -> None:
    path = tmp_path / "course.yaml"
    path.write_text(course_file_text)
    run(path)
    a3 = Assignment.objects.get(code="A3")
    path.write_text(course_file_text.replace("due: 2026-03-10}", "due: 2026-03-12}"))
    out = run(path)
    assert "assignments          5  (created 0, updated 1, unchanged 4)" in out
    moved = Assignment.objects.get(code="A3")
    assert moved.pk == a3.pk
    assert moved.revision == a3.revision + 1  # subscribed calendars see a new SEQUENCE
    assert moved.due_at == dt.datetime(2026, 3, 13, 6, 59, tzinfo=dt.UTC)  # 23:59 PDT
    assert Assignment.objects.count() == 5


def test_a_broken_file_names_each_key_and_writes_nothing(
    tmp_path: Path, course_file_text: str
) -> None:
    broken = course_file_text.replace("due: 2026-03-10}", "due: 2026-03-32}").replace(
        "internal_ip: 10.128.0.15", "internal_ip: ten"
    )
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    err = StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("load_course", str(path), stdout=StringIO(), stderr=err)
    assert "assignments[2].due: not a date" in err.getvalue()
    assert "compute.nodes[4].internal_ip: not an IPv4 address" in err.getvalue()
    assert all(n == 0 for n in counts().values())


def test_check_only_validates(tmp_path: Path, course_file_text: str) -> None:
    path = tmp_path / "course.yaml"
    path.write_text(course_file_text)
    out = StringIO()
    call_command("load_course", str(path), "--check", stdout=out)
    assert "valid (ee290-sp26)" in out.getvalue()
    assert Course.objects.count() == 0


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot read"):
        call_command("load_course", str(tmp_path / "nope.yaml"))


def test_records_dropped_from_the_file_are_reported_not_deleted(
    tmp_path: Path, course_file_text: str
) -> None:
    path = tmp_path / "course.yaml"
    path.write_text(course_file_text)
    run(path)
    lines = course_file_text.splitlines()
    without_a5 = "\n".join(line for line in lines if "code: A5" not in line)
    path.write_text(without_a5)
    out = run(path)
    assert "assignments: in the database but not in the file (kept): A5" in out
    assert Assignment.objects.filter(code="A5").exists()


def test_a_milestone_that_became_an_event_is_removed_unless_a_group_used_it(
    tmp_path: Path, course_file_text: str
) -> None:
    from apps.groups.models import Group
    from apps.milestones.models import GroupMilestone

    path = tmp_path / "course.yaml"
    old = course_file_text.replace(
        "milestones:\n",
        "milestones:\n  - {key: poster-session, name: Poster session, due: 2026-05-05}\n"
        "  - {key: old-used, name: Used once, due: 2026-05-06}\n",
        1,
    )
    path.write_text(old)
    run(path)
    course = Course.objects.get(code="ee290-sp26")
    group = Group.objects.create(course=course, name="G")
    GroupMilestone.objects.create(
        course=course, group=group, milestone=Milestone.objects.get(key="old-used")
    )
    path.write_text(course_file_text)
    out = run(path)
    assert "no longer in the file and never used (removed): poster-session" in out
    assert "in the database but not in the file (kept): old-used" in out
    assert not Milestone.objects.filter(key="poster-session").exists()
    assert CourseEvent.objects.filter(key="poster-session").exists()


def test_a_milestone_asks_for_sources_from_the_course_file(
    tmp_path: Path, course_file_text: str
) -> None:
    """`sources_required: true` makes the milestone ask for a sources and AI-use statement;
    left out, the board's setting is kept; an untracked milestone or a non-boolean is refused
    with its key path and nothing written."""
    path = tmp_path / "course.yaml"
    line = "  - {key: hypothesis-v1, name: Hypothesis statement v1, due: 2026-02-12"
    assert line in course_file_text
    asking = course_file_text.replace(line, line + ", sources_required: true", 1)
    path.write_text(asking)
    run(path)
    assert Milestone.objects.get(key="hypothesis-v1").sources_required is True
    assert Milestone.objects.get(key="proposal-v2").sources_required is False
    # left out: what staff set on the board stays
    Milestone.objects.filter(key="proposal-v2").update(sources_required=True)
    path.write_text(course_file_text)
    run(path)
    assert Milestone.objects.get(key="hypothesis-v1").sources_required is True
    assert Milestone.objects.get(key="proposal-v2").sources_required is True
    path.write_text(course_file_text.replace(line, line + ", sources_required: false", 1))
    run(path)
    assert Milestone.objects.get(key="hypothesis-v1").sources_required is False

    for bad, said in (
        (line + ", sources_required: sometimes", "milestones[1].sources_required: not true/false"),
        (
            "tracked: false, sources_required: true",
            "milestones[0].sources_required: group-formation is not tracked",
        ),
    ):
        was = line if "sometimes" in bad else "tracked: false"
        path.write_text(course_file_text.replace(was, bad, 1))
        err = StringIO()
        with pytest.raises(CommandError, match="problem"):
            call_command("load_course", str(path), stdout=StringIO(), stderr=err)
        assert said in err.getvalue()
        assert Milestone.objects.get(key="hypothesis-v1").sources_required is False
        assert Milestone.objects.get(key="group-formation").sources_required is False
