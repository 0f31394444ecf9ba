"""The course file parser: pure, no database."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from apps.core.coursefile import CourseFileError, parse_course_file

PT = zoneinfo.ZoneInfo("America/Los_Angeles")


@pytest.fixture
def raw(course_file_text: str) -> dict:
    return yaml.safe_load(course_file_text)


def problems_of(data: dict) -> list[str]:
    with pytest.raises(CourseFileError) as info:
        parse_course_file(yaml.safe_dump(data, sort_keys=False))
    return info.value.problems


def test_the_ee290_file_matches_the_syllabus(course_file_text: str) -> None:
    cf = parse_course_file(course_file_text)
    assert cf.course.code == "ee290-sp26"
    assert cf.course.timezone == "America/Los_Angeles"
    assert [lec.number for lec in cf.lectures] == list(range(1, 27))
    assert cf.lectures[0].date == dt.date(2026, 1, 20)
    assert cf.lectures[25].title == "Multi-Agent Systems and Architecture"
    guests = [lec.number for lec in cf.lectures if lec.guest]
    assert guests == [5, 7, 10, 13, 15, 16, 17, 19, 22, 23]
    assert [r.date for r in cf.recess] == [dt.date(2026, 3, 24), dt.date(2026, 3, 26)]
    assert [(a.code, a.due) for a in cf.assignments] == [
        ("A1", dt.date(2026, 2, 10)),
        ("A2", dt.date(2026, 2, 24)),
        ("A3", dt.date(2026, 3, 10)),
        ("A4", dt.date(2026, 4, 7)),
        ("A5", dt.date(2026, 4, 21)),
    ]
    # Deadlines are milestones; what happens over a span (releases, sessions) is an event.
    assert len(cf.milestones) == 8
    assert {m.key for m in cf.milestones} >= {"group-formation", "draft-report", "peer-review"}
    assert [m.key for m in cf.milestones if not m.tracked] == ["group-formation"]
    events = {e.key: e for e in cf.events}
    assert set(events) >= {
        "research-directions",
        "presentations-a",
        "presentations-b",
        "poster-session",
    }
    assert events["presentations-a"].start == dt.datetime(2026, 4, 28, 9, 30)  # noqa: DTZ001 - course-local
    assert events["presentations-b"].start == dt.datetime(2026, 4, 30, 9, 30)  # noqa: DTZ001 - course-local
    assert all(e.kind in {"release", "session"} for e in cf.events)
    assert cf.course.instructors == ["Jiantao Jiao", "Anant Sahai"]
    [oh] = cf.office_hours
    assert (oh.weekday, oh.start, oh.end) == ("tuesday", "11:00", "12:00")
    days = [
        start.astimezone(dt.timezone(dt.timedelta(hours=-8))).date()
        for _, _, start, _ in cf.office_hour_spans()
    ]
    assert days[0] == dt.date(2026, 1, 20)
    assert dt.date(2026, 3, 24) not in days  # spring recess
    assert len(days) == 13  # Tuesdays Jan 20 … Apr 21
    weights = {g.key: g.weight for g in cf.grading}
    assert weights == {"project": 50, "assignments": 35, "scribing": 5, "participation": 10}
    assert cf.policy.group_size.min == 4
    assert cf.policy.group_size.max == 6
    assert cf.policy.slack_days.allowance == 3
    assert cf.policy.slack_days.max_per_assignment == 1
    assert cf.compute is not None
    assert len(cf.compute.nodes) == 8
    assert all(ip.address.startswith("203.0.113.") for ip in cf.compute.static_ips)


def test_a_due_date_means_2359_course_time_across_daylight_saving(course_file_text: str) -> None:
    cf = parse_course_file(course_file_text)
    a1 = cf.instant(cf.assignments[0].due)  # Feb 10: PST, UTC-8
    a4 = cf.instant(cf.assignments[3].due)  # Apr 7: PDT, UTC-7
    assert a1 == dt.datetime(2026, 2, 11, 7, 59, tzinfo=dt.UTC)
    assert a4 == dt.datetime(2026, 4, 8, 6, 59, tzinfo=dt.UTC)
    release = cf.instant(cf.assignments[0].release, release=True)
    assert release.astimezone(PT).time() == dt.time(0, 0)


def test_every_problem_is_reported_with_its_key_path(raw: dict) -> None:
    raw["assignments"][2]["due"] = "2026-02-30"
    raw["lectures"][4]["number"] = "five"
    raw["course"]["timezone"] = "Pacific/Atlantis"
    raw["compute"]["static_ips"][1]["address"] = "203.0.113.300"
    raw["milestones"][0].pop("name")
    raw["surprise"] = True
    problems = problems_of(raw)
    assert "assignments[2].due: not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)" in problems
    assert "lectures[4].number: not a whole number" in problems
    assert any(p.startswith("course.timezone: not an IANA time zone") for p in problems)
    assert "compute.static_ips[1].address: not an IPv4 address" in problems
    assert "milestones[0].name: required" in problems
    assert "surprise: unknown key" in problems
    assert len(problems) == 6


def test_rules_across_entries_are_checked(raw: dict) -> None:
    raw["lectures"][1]["number"] = 1
    raw["lectures"][2]["date"] = dt.date(2026, 3, 24)
    raw["assignments"][0]["due"] = dt.date(2026, 1, 20)
    raw["grading"][0]["parts"][0]["weight"] = 35
    raw["compute"]["static_ips"][0]["region"] = "europe-west4"
    raw["policy"]["group_size"] = {"min": 7, "max": 6}
    problems = problems_of(raw)
    assert "lectures[0].number: 1 is used by more than one lecture" in problems
    assert "lectures[2].date: 2026-03-24 is a recess day" in problems
    assert "assignments[0].due: must be after its release (2026-01-27)" in problems
    assert "grading[0].parts: weights add up to 45, not 50" in problems
    assert any(
        p.startswith("compute.static_ips[0].region: europe-west4 has no node") for p in problems
    )
    assert "policy.group_size: min must not exceed max" in problems


def test_top_level_weights_must_total_100(raw: dict) -> None:
    raw["grading"].pop()  # drop participation (10)
    assert "grading: weights add up to 90, not 100" in problems_of(raw)


def test_broken_yaml_names_line_and_column() -> None:
    with pytest.raises(CourseFileError) as info:
        parse_course_file("course:\n  code: [ee290\n")
    assert info.value.problems[0].startswith("(file): line 3, column 1: not valid YAML")


def test_a_file_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(CourseFileError, match="must be a mapping"):
        parse_course_file("- just\n- a list\n")


def test_unquoted_clock_times_are_understood(raw: dict, course_file_text: str) -> None:
    # YAML 1.1 reads 09:30 unquoted as 570 (base 60); a staff member should not have to know.
    text = course_file_text.replace('start: "09:30"', "start: 09:30")
    assert parse_course_file(text).course.lecture_time.start == "09:30"


@given(day=st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2035, 12, 31)))
def test_any_due_date_lands_at_2359_local(day: dt.date) -> None:
    cf = parse_course_file("course: {code: x, title: X, term: T, timezone: America/Los_Angeles}\n")
    local = cf.instant(day).astimezone(PT)
    assert (local.date(), local.hour, local.minute) == (day, 23, 59)


def test_a_blend_names_known_sources_and_assignments(raw: dict) -> None:
    core = raw["grading"][1]["parts"][0]
    core["blend"] = {"autograder:A9": 60, "checkoffs:A3": 20, "manual": 20}
    assert problems_of(raw) == ["grading[1].parts[0].blend: autograder:A9: no assignment A9"]
    core["blend"] = {"gradescope": 100}
    assert any("grading[1].parts[0].blend" in p for p in problems_of(raw))
