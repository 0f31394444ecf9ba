"""Reads: each student's score on each component and their course grade, for the whole course
in a fixed number of queries (pages, API and exports all read `gradebook_rows`).

Which score counts, for a student and a leaf component: the student's own entry (an override,
or a group's score carried when they left it), else their current group's entry, else what the
component's source computes, else none. A carried entry gives way to the current group's entry
when that was given after they joined: the latest score given to a group while they were in it.
While the course is frozen, the grade shown is the frozen one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import Q, QuerySet

from apps.core.models import Course, GradingComponent, Role, User
from apps.gradebook import rules, sources
from apps.gradebook.models import FrozenGrade, GradeFreeze, ScoreEntry
from apps.gradebook.sources import SOURCES, Computed, by_weight, source_for
from apps.groups.models import GroupMembership


@dataclass
class Cell:
    percent: float | None
    origin: str  # "student entry", "group entry", a source name, or "" (no score)
    detail: str = ""
    to_come: str = ""  # a score so far, more to count (see sources.Computed)


@dataclass(frozen=True)
class Person:
    """The few fields of a student the gradebook shows (read as plain values: 2,000 model
    instances cost more than the whole grade computation)."""

    pk: int
    email: str
    full_name: str
    sid: str

    def get_full_name(self) -> str:
        return self.full_name


@dataclass(eq=False)
class Row:
    student: Person
    group: str
    cells: dict[str, Cell]
    grade: rules.CourseGrade
    status: str
    letter: str | None
    total: float | None
    reason: str
    frozen: bool = False
    percents: dict[str, float | None] = field(default_factory=dict)

    @property
    def at_risk(self) -> bool:
        return self.grade.at_risk

    @property
    def changing(self) -> bool:
        """A component has a score "so far" that later events can still move: the grade is not
        final even when every component shows a score, and the what-if still has work to do."""
        return any(c.to_come and c.percent is not None for c in self.cells.values())


def components_of(course: Course) -> list[GradingComponent]:
    return list(GradingComponent.objects.filter(course=course).order_by("position", "pk"))


def rule_components(components: list[GradingComponent]) -> list[rules.Component]:
    keys = {c.pk: c.key for c in components}
    return [
        rules.Component(
            c.key,
            c.name,
            float(c.weight),
            float(c.satisfactory_threshold),
            keys.get(c.parent_id) if c.parent_id else None,
        )
        for c in components
    ]


def leaf_components(components: list[GradingComponent]) -> list[GradingComponent]:
    parents = {c.parent_id for c in components if c.parent_id}
    return [c for c in components if c.pk not in parents]


def cutoffs_of(course: Course) -> list[tuple[str, float]]:
    if course.letter_cutoffs:
        return [(str(letter), float(minimum)) for letter, minimum in course.letter_cutoffs]
    return list(rules.STANDARD_CUTOFFS)


def freeze_of(course: Course) -> GradeFreeze | None:
    return GradeFreeze.objects.filter(course=course).select_related("frozen_by").first()


def students_of(course: Course) -> QuerySet[User]:
    return User.objects.filter(
        memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
    ).order_by("full_name", "email")


def gradebook_rows(
    course: Course,
    *,
    student_ids: Collection[int] | None = None,
    components: list[GradingComponent] | None = None,
) -> list[Row]:
    """Every active student's row (or those in `student_ids`), in name order. About 10 queries
    whatever the course's size: students, groups, entries, one or two per source in use, the
    freeze."""
    components = components if components is not None else components_of(course)
    spec = rule_components(components)
    cutoffs = cutoffs_of(course)
    leaves = leaf_components(components)
    users = students_of(course)
    if student_ids is not None:
        users = users.filter(pk__in=student_ids)
    people = [Person(*x) for x in users.values_list("id", "email", "full_name", "sid")]
    ids = [u.pk for u in people] if student_ids is not None else None
    memberships = GroupMembership.objects.filter(course=course, left_at__isnull=True)
    if ids is not None:
        memberships = memberships.filter(user_id__in=ids)
    group_of: dict[int, int] = {}
    group_name: dict[int, str] = {}
    joined: dict[int, Any] = {}
    for uid, gid, name, since in memberships.values_list(
        "user_id", "group_id", "group__name", "joined_at"
    ):
        group_of[uid], group_name[uid], joined[uid] = gid, name, since
    entries = ScoreEntry.objects.filter(course=course)
    if ids is not None:
        entries = entries.filter(Q(student_id__in=ids) | Q(group_id__in=set(group_of.values())))
    by_student: dict[tuple[int, int], tuple[float, str]] = {}
    by_group: dict[tuple[int, int], tuple[float, str]] = {}
    carried: set[tuple[int, int]] = set()
    given_at: dict[tuple[int, int], Any] = {}
    for component_id, sid, gid, percent, note, was_carried, at in entries.values_list(
        "component_id", "student_id", "group_id", "percent", "note", "carried", "updated_at"
    ):
        if sid is not None:
            by_student[(component_id, sid)] = (float(percent), note)
            if was_carried:
                carried.add((component_id, sid))
        else:
            by_group[(component_id, gid)] = (float(percent), note)
            given_at[(component_id, gid)] = at
    computed: dict[str, dict[int, Computed]] = {}
    for source in {s for c in leaves for s in (c.blend or {})} - {"manual"}:
        if (scoped := source_for(source)) is not None:
            computed[source] = scoped(course, ids, group_of)
    for source in {c.source for c in leaves} & set(SOURCES):
        computed[source] = SOURCES[source](course, ids, group_of)
    freeze = freeze_of(course)
    frozen: dict[int, FrozenGrade] = {}
    if freeze is not None:
        frozen_rows = FrozenGrade.objects.filter(course=course)
        if ids is not None:
            frozen_rows = frozen_rows.filter(student_id__in=ids)
        frozen = {f.student_id: f for f in frozen_rows}

    out = []
    for u in people:
        cells: dict[str, Cell] = {}
        g = group_of.get(u.pk)
        for c in leaves:
            own = by_student.get((c.pk, u.pk))
            shared = by_group.get((c.pk, g)) if g is not None else None
            if (
                own is not None
                and shared is not None
                and g is not None
                and (c.pk, u.pk) in carried
                and given_at[(c.pk, g)] >= joined[u.pk]
            ):
                own = None  # carried from an earlier group; this one's score is newer
            if c.blend:
                entered = own if own is not None else shared
                cells[c.key] = blended(c.blend, entered, computed, u.pk)
            elif own is not None:
                cells[c.key] = Cell(own[0], "student entry", own[1])
            elif shared is not None:
                cells[c.key] = Cell(shared[0], "group entry", shared[1])
            elif c.source in computed and (v := computed[c.source].get(u.pk)) is not None:
                cells[c.key] = Cell(
                    v.percent, c.source if v.percent is not None else "", v.detail, v.to_come
                )
            else:
                cells[c.key] = Cell(None, "", "")
        grade = rules.course_grade(spec, {k: cell.percent for k, cell in cells.items()}, cutoffs)
        f = frozen.get(u.pk)
        if f is not None:
            row = Row(
                u,
                group_name.get(u.pk, ""),
                cells,
                grade,
                f.status,
                f.letter or None,
                f.total,
                f.reason,
                frozen=True,
                percents=f.percents,
            )
        else:
            row = Row(
                u,
                group_name.get(u.pk, ""),
                cells,
                grade,
                grade.status,
                grade.letter,
                grade.total,
                grade.reason,
                percents=grade.percents,
            )
        out.append(row)
    return out


SOURCE_NAMES = {"manual": "staff", "peer-review": "peer", "autograder": "autograded"}


def blended(
    blend: dict[str, float],
    entered: tuple[float, str] | None,
    computed: dict[str, dict[int, Computed]],
    student_id: int,
) -> Cell:
    """A composed score: each source's percent × its share of the weights, the composition
    spelled out ('staff 85 × 70 % + peer 80 × 30 % = 83.5'); incomplete (None) while any
    source has nothing yet for this student, naming which. A computed part that is still to
    come for everyone (no checkoff held yet, no assignment released yet) is left out and the
    other parts' shares grow to fill it: the score is "so far", and the cell says what is to come
    (the what-if then counts the whole component as unknown)."""
    present: list[tuple[str, float, float, str]] = []  # (name, percent, weight, source detail)
    missing: list[str] = []
    later: list[str] = []
    for source, weight in by_weight(blend):
        base, _, scope = source.partition(":")
        name = f"{scope} {SOURCE_NAMES.get(base, base)}".strip()
        if source == "manual":
            if entered is None:
                missing.append(name)
            else:
                present.append((name, entered[0], float(weight), ""))
            continue
        v = computed.get(source, {}).get(student_id)
        if v is None:
            missing.append(name)
        elif v.percent is None and v.to_come:
            later.append(f"{name}: {v.to_come}")
        elif v.percent is None:
            missing.append(name)
        else:
            present.append((name, v.percent, float(weight), v.detail))
            if v.to_come:
                later.append(v.to_come)
    # While a part is missing, shares are of the whole blend; once only parts to come are left
    # out, of the parts present.
    whole = sum(float(w) for w in blend.values())
    total_weight = whole if missing else sum(w for _, _, w, _ in present)
    terms = [
        f"{name} {got:.4g} × {w * 100 / total_weight:.4g} %" + (f" ({why})" if why else "")
        for name, got, w, why in present
    ]
    if missing or not present:
        shown = " + ".join(terms)
        waiting = "waiting for: " + ", ".join(missing or [n.split(":")[0] for n in later])
        return Cell(None, "", f"{shown}; {waiting}" if shown else waiting)
    value = sum(got * w for _, got, w, _ in present) / total_weight
    return Cell(value, "blend", " + ".join(terms) + f" = {value:.4g}", "; ".join(later))


STATUS_FILTERS = {
    "at-risk": "failing a component now",
    "incomplete": "a component still has no score",
    "fail": "F (a component unsatisfactory)",
    "final": "complete, letter given",
}
SORTS = ("name", "-total", "total", "letter", "group")


def filter_rows(
    rows: list[Row], *, q: str = "", status: str = "", letter: str = "", sort: str = ""
) -> list[Row]:
    """Search (name, email, SID, group), filter by status or letter, sort. At-risk students come
    first unless another order is asked for."""
    if q:
        needle = q.lower()
        rows = [
            r
            for r in rows
            if needle
            in " ".join(
                (r.student.full_name, r.student.email, r.student.sid or "", r.group)
            ).lower()
        ]
    if status == "at-risk":
        rows = [r for r in rows if r.at_risk]
    elif status in ("incomplete", "fail", "final"):
        rows = [r for r in rows if r.status == status]
    if letter:
        rows = [r for r in rows if (r.letter or "") == letter]
    if sort in ("-total", "total"):
        known = [r for r in rows if r.total is not None or r.grade.to_date is not None]
        rest = [r for r in rows if r.total is None and r.grade.to_date is None]
        known.sort(
            key=lambda r: r.total if r.total is not None else r.grade.to_date or 0,
            reverse=sort == "-total",
        )
        return known + rest
    if sort == "group":
        return sorted(rows, key=lambda r: (r.group == "", r.group, r.student.full_name))
    if sort == "letter":
        return sorted(rows, key=lambda r: (r.letter is None, r.letter or "", r.student.full_name))
    if sort == "name":
        return rows
    return sorted(rows, key=lambda r: not r.at_risk)  # stable: at risk first, then by name


def export_rows(course: Course, rows: list[Row], shape: str) -> Iterator[list[Any]]:
    """CSV rows, header first. `canvas`: Canvas's gradebook-import columns (Student, ID,
    SIS User ID, SIS Login ID, Section, then one column per component in percent, the total
    and the letter); `plain`: e-mail, name, SID, group, each leaf, total, status, letter, reason."""
    components = components_of(course)
    leaves = leaf_components(components)

    def pct(x: float | None) -> str:
        return "" if x is None else f"{x:.2f}"

    if shape == "canvas":
        tops = [c for c in components if c.parent_id is None]
        yield [
            "Student",
            "ID",
            "SIS User ID",
            "SIS Login ID",
            "Section",
            *[f"{c.name} (%)" for c in tops],
            "Course total (%)",
            "Final letter",
        ]
        for r in rows:
            name = r.student.full_name.split()
            sortable = (
                f"{name[-1]}, {' '.join(name[:-1])}" if len(name) > 1 else r.student.full_name
            )
            yield [
                sortable,
                "",
                r.student.sid or "",
                r.student.email,
                course.code,
                *[pct(r.percents.get(c.key)) for c in tops],
                pct(r.total),
                r.letter or "",
            ]
        return
    yield [
        "email",
        "name",
        "sid",
        "group",
        *[c.key for c in leaves],
        "total",
        "status",
        "letter",
        "reason",
    ]
    for r in rows:
        yield [
            r.student.email,
            r.student.full_name,
            r.student.sid or "",
            r.group,
            *[pct(r.cells[c.key].percent) for c in leaves],
            pct(r.total),
            r.status,
            r.letter or "",
            r.reason,
        ]


def what_if(
    components: list[Any], row: Row, target: str, cutoffs: list[tuple[str, float]]
) -> rules.WhatIf:
    """The what-if for one student: a component whose score is only "so far" (more assignments
    to release, milestones not due) counts as still to come, not as final, and the message
    says which."""
    scores = {k: None if c.to_come else c.percent for k, c in row.cells.items()}
    found = rules.needed_for(rule_components(components), scores, target, cutoffs)
    later = [
        f"{c.name} ({row.cells[c.key].to_come})"
        for c in components
        if c.key in row.cells and row.cells[c.key].to_come and row.cells[c.key].percent is not None
    ]
    if not later:
        return found
    return replace(
        found, message=found.message + " Counted as still to come: " + "; ".join(later) + "."
    )


def grade_lines(components: list[Any], row: Row) -> list[dict[str, Any]]:
    """One line per component and part, as the student and staff detail pages and the API's
    own-grade answer show it: its percent, how it is made, and whether it is below its
    satisfactory threshold."""
    failing = {s.key for s in row.grade.failing}
    parents = {c.parent_id for c in components if c.parent_id}
    out = []
    for c in components:
        cell = row.cells.get(c.key)
        pct = row.percents.get(c.key) if cell is None else cell.percent
        out.append(
            {
                "c": c,
                "percent": pct,
                "shown": f"{rules.fmt(pct)} %",
                "cell": cell,
                "failing": c.key in failing,
                "source": "from its parts"
                if c.pk in parents
                else sources.blend_help(c.blend)
                if c.blend
                else sources.SOURCE_HELP.get(c.source, c.source),
                "is_part": c.parent_id is not None,
            }
        )
    return out
