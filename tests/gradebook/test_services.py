"""Scores entered, imported and computed, as staff and students would see them on EE 290's demo."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import AuditEvent, GradingComponent, User
from apps.gradebook import selectors, services
from apps.groups.models import Group

pytestmark = pytest.mark.django_db

FULL = {
    "project-technical": 100,
    "project-impact": 100,
    "assignments-core": 100,
    "assignments-enhancements": 100,
    "participation": 100,
}


def people(course):  # type: ignore[no-untyped-def]
    # These tests are about scores staff enter: technical quality and core/working scored by
    # staff alone here (the course file blends them with the peer score, and with the autograded
    # part and the checkoffs; test_a_blended_score_… and test_sources cover those).
    GradingComponent.objects.filter(course=course, key="project-technical").update(blend={})
    GradingComponent.objects.filter(course=course, key="assignments-core").update(blend={})
    instructor = User.objects.get(email="instructor@example.edu")
    ta = User.objects.get(email="ta1@example.edu")
    group = Group.objects.filter(course=course).order_by("name").first()
    members = [
        m.user for m in group.memberships.filter(left_at__isnull=True).select_related("user")
    ]
    return instructor, ta, group, members


def set_scores(course, actor, **targets) -> None:  # type: ignore[no-untyped-def]
    changes = [
        services.score_change(course=course, component_key=k, percent=v, **targets)
        for k, v in FULL.items()
    ]
    services.scores_apply(actor=actor, course=course, changes=changes)


def row_of(course, user):  # type: ignore[no-untyped-def]
    return selectors.gradebook_rows(course, student_ids=[user.pk])[0]


def test_95_percent_with_scribing_unsatisfactory_is_an_f_on_both_pages(ee290_demo) -> None:
    course = ee290_demo
    _, ta, group, members = people(course)
    student = members[0]
    set_scores(course, ta, group_id=group.pk)
    services.scores_apply(
        actor=ta,
        course=course,
        changes=[
            services.score_change(
                course=course, component_key="scribing", percent="0", student_email=student.email
            )
        ],
    )
    row = row_of(course, student)
    assert (row.status, row.letter, row.total) == ("fail", "F", pytest.approx(95.0))
    why = "Scribing (2 lectures per student) is 0 %, below the satisfactory 60 %"
    c = Client()
    c.force_login(student)
    mine = c.get(f"/c/{course.code}/gradebook/").content.decode()
    assert why in mine
    assert "95.0" in mine
    c.force_login(ta)
    board = c.get(f"/c/{course.code}/gradebook/?status=fail").content.decode()
    assert why in board
    assert student.full_name in board
    api = c.get(f"/api/v1/courses/{course.code}/gradebook/students/?status=fail").json()
    assert api["count"] == 1
    assert api["results"][0]["reason"] == f"F: {why}."


def test_a_group_score_applies_to_each_member_and_a_student_score_overrides_it(ee290_demo) -> None:
    course = ee290_demo
    _, ta, group, members = people(course)
    services.scores_apply(
        actor=ta,
        course=course,
        changes=[
            services.score_change(
                course=course, component_key="project-technical", percent="17/20", group_id=group.pk
            ),
            services.score_change(
                course=course,
                component_key="project-technical",
                percent="92",
                note="carried the demo",
                student_email=members[1].email,
            ),
        ],
    )
    rows = {r.student.pk: r for r in selectors.gradebook_rows(course)}
    assert rows[members[0].pk].cells["project-technical"].percent == 85
    assert rows[members[0].pk].cells["project-technical"].origin == "group entry"
    assert rows[members[1].pk].cells["project-technical"].percent == 92
    outsider = next(r for r in rows.values() if r.group and r.group != group.name)
    assert (
        outsider.cells["project-technical"].percent is None
    )  # another group: no score, not a zero
    # every change audited, old → new
    services.scores_apply(
        actor=ta,
        course=course,
        changes=[
            services.score_change(
                course=course, component_key="project-technical", percent="80", group_id=group.pk
            )
        ],
    )
    history = services.score_history(course=course, student_id=members[0].pk, group_id=group.pk)
    assert [(e.before["percent"], e.after["percent"], e.actor_id) for e in history][:2] == [
        (85.0, 80.0, ta.pk),
        (None, 85.0, ta.pk),
    ]


def test_clearing_and_bad_input(ee290_demo) -> None:
    course = ee290_demo
    _, ta, _group, members = people(course)
    with pytest.raises(DomainError, match="outside 0–100"):
        services.score_change(
            course=course,
            component_key="participation",
            percent="120",
            student_email=members[0].email,
        )
    with pytest.raises(DomainError, match="has parts"):
        services.score_change(
            course=course, component_key="project", percent="90", student_email=members[0].email
        )
    with pytest.raises(DomainError, match="not a student of this course"):
        services.score_change(
            course=course,
            component_key="participation",
            percent="90",
            student_email="ta1@example.edu",
        )
    change = services.score_change(
        course=course, component_key="participation", percent="90", student_email=members[0].email
    )
    services.scores_apply(actor=ta, course=course, changes=[change])
    cleared = services.score_change(
        course=course, component_key="participation", percent="", student_email=members[0].email
    )
    assert services.scores_apply(actor=ta, course=course, changes=[cleared])["cleared"] == 1
    cell = row_of(course, members[0]).cells["participation"]
    assert cell.origin == "participation"  # cleared: back to what the recorded events give
    with pytest.raises(NotAllowed):
        services.scores_apply(actor=members[0], course=course, changes=[change])


def test_only_instructors_change_weights_and_sums_are_named(ee290_demo) -> None:
    course = ee290_demo
    instructor, ta, _, _ = people(course)
    with pytest.raises(NotAllowed):
        services.components_update(
            actor=ta, course=course, changes=[{"key": "scribing", "weight": 5}]
        )
    with pytest.raises(DomainError, match="add up to 105, not 100"):
        services.components_update(
            actor=instructor, course=course, changes=[{"key": "scribing", "weight": 10}]
        )
    with pytest.raises(DomainError, match="The parts of Assignments add up to 30, not its 35"):
        services.components_update(
            actor=instructor, course=course, changes=[{"key": "assignments-core", "weight": 20}]
        )
    services.components_update(
        actor=instructor,
        course=course,
        changes=[{"key": "scribing", "weight": 10}, {"key": "participation", "weight": 5}],
        cutoffs=[("A", 90), ("B", 80), ("C", 70)],
    )
    course.refresh_from_db()
    assert selectors.cutoffs_of(course) == [("A", 90.0), ("B", 80.0), ("C", 70.0)]
    events = AuditEvent.objects.filter(course=course, action="gradebook.components_changed")
    assert events.get().before["scribing"]["weight"] == "5.00"


def test_freezing_keeps_grades_and_refuses_changes(ee290_demo) -> None:
    course = ee290_demo
    instructor, ta, group, members = people(course)
    set_scores(course, ta, group_id=group.pk)
    with pytest.raises(NotAllowed):
        services.grades_freeze(actor=ta, course=course, confirm=True)
    with pytest.raises(DomainError, match="confirm"):
        services.grades_freeze(actor=instructor, course=course, confirm=False)
    services.grades_freeze(actor=instructor, course=course, confirm=True)
    with pytest.raises(Conflict, match="frozen"):
        set_scores(course, ta, group_id=group.pk)
    assert row_of(course, members[0]).frozen
    services.grades_unfreeze(actor=instructor, course=course, confirm=True)
    set_scores(course, ta, group_id=group.pk)


def _csv(*rows: list[str]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


def test_import_reports_every_problem_by_row_and_column_and_stores_all_or_nothing(
    ee290_demo,
) -> None:
    course = ee290_demo
    _, ta, group, members = people(course)
    bad = _csv(
        ["email", "Technical quality", "participation", "Canvas ID"],
        [members[0].email, "88", "9O", "1"],
        ["nobody@example.edu", "70", "", "2"],
        [members[1].email, "150", "80", "3"],
    )
    record, plan = services.import_upload(actor=ta, course=course, filename="scores.csv", data=bad)
    assert [str(p) for p in plan.problems] == [
        "row 2, column 'participation': '9O' is not a score (use 85, 85 % or 17/20)",
        "row 4, column 'Technical quality': '150' is outside 0–100 %",
        "row 3, column 'email': 'nobody@example.edu': no student of this course has this e-mail",
    ]
    assert plan.notes == ["Ignored columns: Canvas ID."]
    with pytest.raises(Conflict, match="3 problem"):
        services.import_commit(actor=ta, course=course, import_id=record.pk)
    assert (
        not selectors.gradebook_rows(course, student_ids=[members[0].pk])[0]
        .cells["project-technical"]
        .percent
    )
    good = _csv(["group", "project-technical", "note"], [group.name, "85", "demo day"])
    record, plan = services.import_upload(actor=ta, course=course, filename="groups.csv", data=good)
    assert plan.ok
    assert len(plan.changes) == 1
    assert services.import_commit(actor=ta, course=course, import_id=record.pk)["set"] == 1
    assert all(row_of(course, m).cells["project-technical"].percent == 85 for m in members)
    with pytest.raises(Conflict, match="already"):
        services.import_commit(actor=ta, course=course, import_id=record.pk)


def test_exports_parse_back(ee290_demo) -> None:
    course = ee290_demo
    _, ta, group, members = people(course)
    set_scores(course, ta, group_id=group.pk)
    services.scores_apply(
        actor=ta,
        course=course,
        changes=[
            services.score_change(
                course=course, component_key="scribing", percent="80", group_id=group.pk
            )
        ],
    )
    c = Client()
    c.force_login(ta)
    for shape in ("plain", "canvas"):
        body = b"".join(
            c.get(f"/c/{course.code}/gradebook/export.csv?shape={shape}").streaming_content
        ).decode()
        rows = list(csv.DictReader(io.StringIO(body)))
        assert len(rows) == 40
        mine = next(r for r in rows if members[0].email in r.values())
        if shape == "plain":
            assert float(mine["total"]) == pytest.approx(99.0)
            assert mine["letter"] == "A+"
            assert float(mine["scribing"]) == 80
        else:
            assert list(rows[0])[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
            assert float(mine["Course total (%)"]) == pytest.approx(99.0)
            assert mine["Final letter"] == "A+"


def test_the_components_page_freezes_after_confirming_and_refuses_tas(ee290_demo) -> None:
    """From the components page: freezing needs the box ticked; a TA's post is a 403; the
    weights form with a bad cut-off names it and changes nothing."""
    course = ee290_demo
    instructor, ta, _group, _members = people(course)
    boss, helper = Client(), Client()
    boss.force_login(instructor)
    helper.force_login(ta)
    url = f"/c/{course.code}/gradebook/"
    assert helper.post(f"{url}freeze/", {"confirm": "yes"}).status_code == 403
    r = boss.post(f"{url}freeze/", follow=True)
    assert "confirm" in r.content.decode()
    assert selectors.freeze_of(course) is None
    r = boss.post(f"{url}freeze/", {"confirm": "yes"}, follow=True)
    assert "Grades frozen" in r.content.decode()
    assert selectors.freeze_of(course) is not None
    boss.post(f"{url}unfreeze/", {"confirm": "yes"})
    assert selectors.freeze_of(course) is None
    r = boss.post(f"{url}components/save/", {"cutoffs": "A ninety"}, follow=True)
    assert "Letter cut-offs:" in r.content.decode()


GRADESCOPE = (
    "First Name,Last Name,SID,Email,Sections,Total Score,Max Points,Status,Submission ID,"
    "Submission Time,Lateness (H:M:S),View Count,Submission Count,1: Roofline (4.0 pts),"
    "2: Ring AllReduce (6.0 pts)\r\n"
    "Student,One,3031,student01@example.edu,,9.0,10.0,Graded,1,2026-02-11 08:30:12 -0800,"
    "0:00:00,2,1,4.0,5.0\r\n"
    "Student,Two,3032,student02@example.edu,,,10.0,Missing,,,,,,,\r\n"
    "Student,Three,3033,student03@example.edu,,7.5,10.0,Graded,3,2026-02-11 09:30:12 -0800,"
    "0:00:00,1,1,3.5,4.0\r\n"
)


def test_gradescopes_own_score_export_imports_as_it_is(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Downloaded from Gradescope and uploaded unchanged: Total Score ÷ Max Points becomes the
    chosen component's percent; a Missing submission changes nothing and is listed."""
    course = ee290_demo
    instructor, _, _, _ = people(course)
    data = GRADESCOPE.encode()
    _, unsure = services.import_upload(
        actor=instructor, course=course, filename="A1_scores.csv", data=data
    )
    assert "choose which component its Total Score is for" in str(unsure.problems[0])
    record, plan = services.import_upload(
        actor=instructor,
        course=course,
        filename="A1_scores.csv",
        data=data,
        component_key="assignments-enhancements",
    )
    assert plan.problems == []
    assert any("Missing in Gradescope" in n for n in plan.notes)
    names = {
        e: User.objects.get(email=e).get_full_name()
        for e in ("student01@example.edu", "student03@example.edu")
    }
    assert sorted((c.who, c.percent) for c, _ in plan.changes) == sorted(
        [(names["student01@example.edu"], 90.0), (names["student03@example.edu"], 75.0)]
    )
    services.import_commit(actor=instructor, course=course, import_id=record.pk)
    one = User.objects.get(email="student01@example.edu")
    assert row_of(course, one).cells["assignments-enhancements"].percent == 90


def test_a_blended_score_shows_its_composition_and_waits_for_every_part(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Technical quality = staff 80 % + peer review 20 % (the course file's blend): incomplete
    until the peer score exists, then composed, with how it was composed on the page."""
    from apps.gradebook import selectors as sel
    from apps.gradebook.sources import Computed

    course = ee290_demo
    _, ta, group, members = people(course)
    GradingComponent.objects.filter(course=course, key="project-technical").update(
        blend={"manual": 80, "peer-review": 20}
    )
    services.scores_apply(
        actor=ta,
        course=course,
        changes=[
            services.score_change(
                course=course, component_key="project-technical", percent="90", group_id=group.pk
            )
        ],
    )
    cell = row_of(course, members[0]).cells["project-technical"]
    assert (cell.percent, cell.detail) == (None, "staff 90 × 80 %; waiting for: peer")
    got = sel.blended(
        {"manual": 80, "peer-review": 20},
        (90.0, ""),
        {"peer-review": {members[0].pk: Computed(70.0, "peer score 3.50 of 5")}},
        members[0].pk,
    )
    assert got.percent == pytest.approx(86.0)
    assert got.detail == "staff 90 × 80 % + peer 70 × 20 % (peer score 3.50 of 5) = 86"


def test_the_components_page_says_how_technical_quality_is_blended(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(User.objects.get(email="instructor@example.edu"))
    page = c.get(f"/c/{ee290_demo.code}/gradebook/components/").content.decode()
    assert "blend: staff 80 %, peer review 20 %" in page
