"""Writes: weights, thresholds and letter cut-offs (instructors), scores (staff), imports, and
freezing the term's grades. Each write is one transaction that locks the course's gradebook
(the course row), refuses while grades are frozen, and writes an audit row per change with the
old and new value."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.csvfile import refuse_unreadable
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import AuditEvent, Course, GradingComponent, User
from apps.core.permissions import is_instructor, is_staff
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.gradebook import imports, rules, selectors
from apps.gradebook.models import FrozenGrade, GradeFreeze, ScoreEntry, ScoreImport
from apps.gradebook.sources import SOURCE_HELP
from apps.groups.models import Group


def _lock(course: Course) -> None:
    """Serialise gradebook writes of one course, and refuse them while grades are frozen."""
    Course.objects.select_for_update().get(pk=course.pk)
    freeze = GradeFreeze.objects.filter(course=course).select_related("frozen_by").first()
    if freeze is not None:
        by = freeze.frozen_by.get_full_name() if freeze.frozen_by else "an instructor"
        raise Conflict(
            f"Grades were frozen {format_instant(freeze.frozen_at, course.timezone)} by {by}; "
            "an instructor must unfreeze them before anything changes."
        )


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may enter scores.")


# --- components and cut-offs -------------------------------------------------------------


def components_update(
    *,
    actor: User,
    course: Course,
    changes: Sequence[dict[str, Any]] = (),
    cutoffs: Sequence[tuple[str, float]] | None = None,
) -> list[GradingComponent]:
    """Change weights, thresholds and sources (`changes`: dicts with `key` and any of `weight`,
    `satisfactory_threshold`, `source`) and the letter cut-offs, all or nothing. Instructors
    only. Weights that do not add up are refused with the sum named; audited."""
    if not is_instructor(actor, course):
        raise NotAllowed("Only instructors may change weights, thresholds or letter cut-offs.")
    with transaction.atomic():
        _lock(course)
        components = selectors.components_of(course)
        by_key = {c.key: c for c in components}
        before = {c.key: _component_json(c) for c in components}
        problems: list[str] = []
        has_parts = {c.parent_id for c in components if c.parent_id}
        for change in changes:
            c = by_key.get(str(change.get("key", "")))
            if c is None:
                problems.append(f"There is no component {change.get('key')!r}.")
                continue
            for name in ("weight", "satisfactory_threshold"):
                if change.get(name) is not None:
                    try:
                        setattr(c, name, Decimal(str(change[name])).quantize(Decimal("0.01")))
                    except ArithmeticError:
                        problems.append(f"{c.name}: {change[name]!r} is not a number.")
            if change.get("source") is not None:
                if change["source"] not in SOURCE_HELP:
                    problems.append(f"{c.name}: the source is one of {', '.join(SOURCE_HELP)}.")
                elif c.pk in has_parts and change["source"] != "manual":
                    problems.append(f"{c.name} has parts: its score comes from them.")
                else:
                    c.source = change["source"]
        problems += rules.weight_problems(selectors.rule_components(components))
        if cutoffs is not None:
            problems += rules.cutoff_problems(list(cutoffs))
        if problems:
            raise DomainError(" ".join(problems), field="components")
        changed = [c for c in components if _component_json(c) != before[c.key]]
        GradingComponent.objects.bulk_update(
            changed, ["weight", "satisfactory_threshold", "source"]
        )
        if changed:
            audit_record(
                actor=actor,
                action="gradebook.components_changed",
                course=course,
                before={c.key: before[c.key] for c in changed},
                after={c.key: _component_json(c) for c in changed},
            )
        if cutoffs is not None:
            new = [[letter, float(minimum)] for letter, minimum in cutoffs]
            old = [[x, float(y)] for x, y in selectors.cutoffs_of(course)]
            if new != old:
                course.letter_cutoffs = new
                Course.objects.filter(pk=course.pk).update(letter_cutoffs=new)
                audit_record(
                    actor=actor,
                    action="gradebook.cutoffs_changed",
                    course=course,
                    before={"cutoffs": old},
                    after={"cutoffs": new},
                )
    return components


def _component_json(c: GradingComponent) -> dict[str, Any]:
    return {"weight": str(c.weight), "threshold": str(c.satisfactory_threshold), "source": c.source}


# --- scores --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreChange:
    """One score to set (percent) or clear (None), for a student or a whole group."""

    component: GradingComponent
    percent: float | None
    note: str = ""
    student: User | None = None
    group: Group | None = None

    @property
    def who(self) -> str:
        if self.student is not None:
            return self.student.get_full_name() or self.student.email
        return f"group {self.group.name}" if self.group is not None else "?"


def _target_id(c: ScoreChange) -> str:
    if c.student is not None:
        return f"{c.component.key}:student:{c.student.pk}"
    return f"{c.component.key}:group:{c.group.pk if c.group is not None else ''}"


def scores_apply(
    *,
    actor: User,
    course: Course,
    changes: Iterable[ScoreChange],
    action: str = "gradebook.score_set",
    note: str = "",
) -> dict[str, int]:
    """Set or clear each score, all in one transaction, with one audit row per score that
    changes (old → new). Returns counts: set, cleared, unchanged."""
    _require_staff(actor, course)
    changes = list(changes)
    counts = {"set": 0, "cleared": 0, "unchanged": 0}
    with transaction.atomic():
        _lock(course)
        existing: dict[tuple[int, str, int], ScoreEntry] = {}
        students = [c.student.pk for c in changes if c.student is not None]
        groups = [c.group.pk for c in changes if c.group is not None]
        for row in ScoreEntry.objects.select_for_update().filter(
            course=course, student_id__in=students
        ):
            existing[(row.component_id, "student", row.student_id or 0)] = row
        for row in ScoreEntry.objects.select_for_update().filter(
            course=course, group_id__in=groups
        ):
            existing[(row.component_id, "group", row.group_id or 0)] = row
        audits: list[AuditEvent] = []
        create: list[ScoreEntry] = []
        update: list[ScoreEntry] = []
        delete: list[int] = []
        now = timezone.now()
        for c in changes:
            target = c.student if c.student is not None else c.group
            kind = "student" if c.student is not None else "group"
            found = existing.get((c.component.pk, kind, target.pk if target is not None else 0))
            e = found
            old = float(found.percent) if found is not None else None
            new = None if c.percent is None else round(float(c.percent), 2)
            if old == new and (e is None or e.note == c.note):
                counts["unchanged"] += 1
                continue
            if new is None:
                if e is not None:
                    delete.append(e.pk)
                counts["cleared"] += 1
            elif e is None:
                create.append(
                    ScoreEntry(
                        course=course,
                        component=c.component,
                        student=c.student,
                        group=c.group,
                        percent=Decimal(str(new)),
                        note=c.note[:300],
                        updated_by=actor,
                    )
                )
                counts["set"] += 1
            else:
                e.percent, e.note, e.updated_by, e.updated_at = (
                    Decimal(str(new)),
                    c.note[:300],
                    actor,
                    now,
                )
                e.carried = False  # staff set it: an override now
                update.append(e)
                counts["set"] += 1
            audits.append(
                AuditEvent(
                    actor=actor,
                    course=course,
                    action=action,
                    object_type="gradebook.score",
                    object_id=_target_id(c),
                    object_repr=f"{c.component.name} · {c.who}"[:200],
                    before={"percent": old},
                    after={"percent": new, "note": c.note},
                    note=note,
                )
            )
        ScoreEntry.objects.filter(pk__in=delete).delete()
        ScoreEntry.objects.bulk_create(create, batch_size=1000)
        ScoreEntry.objects.bulk_update(
            update, ["percent", "note", "carried", "updated_by", "updated_at"], batch_size=1000
        )
        AuditEvent.objects.bulk_create(audits, batch_size=1000)
    return counts


def score_change(
    *,
    course: Course,
    component_key: str,
    percent: str | float | None,
    note: str = "",
    student_email: str = "",
    student_id: int | None = None,
    group_id: int | None = None,
) -> ScoreChange:
    """A change from what a person typed: the component by key (a leaf), the student by e-mail
    or id or a group by id; the score as 85, 85 %, 17/20 or blank (clear). Raises DomainError
    naming the field."""
    component = GradingComponent.objects.filter(course=course, key=component_key).first()
    if component is None:
        raise DomainError(f"There is no component {component_key!r}.", field="component")
    if GradingComponent.objects.filter(parent=component).exists():
        raise DomainError(
            f"{component.name} has parts; score its parts instead.", field="component"
        )
    value: float | None
    if percent is None or (isinstance(percent, str) and not percent.strip()):
        value = None
    else:
        try:
            value = rules.parse_score(str(percent))
        except ValueError as exc:
            raise DomainError(str(exc), field="percent") from None
    if (student_email or student_id) and group_id:
        raise DomainError("Give a student or a group, not both.", field="student")
    if group_id:
        group = Group.objects.filter(course=course, pk=group_id, dissolved_at__isnull=True).first()
        if group is None:
            raise DomainError("There is no such group in this course.", field="group")
        return ScoreChange(component, value, note, group=group)
    people = selectors.students_of(course)
    student = (
        people.filter(pk=student_id)
        if student_id
        else people.filter(email__iexact=student_email.strip())
        if student_email.strip()
        else people.none()
    ).first()
    if student is None:
        what = student_email or student_id
        raise DomainError(
            f"{what!s} is not a student of this course." if what else "Name a student or a group.",
            field="student",
        )
    return ScoreChange(component, value, note, student=student)


def score_history(*, course: Course, student_id: int, group_id: int | None) -> list[AuditEvent]:
    """Every change to this student's scores and their group's, newest first (the last 100)."""
    q = Q(object_id__endswith=f":student:{student_id}")
    if group_id:
        q |= Q(object_id__endswith=f":group:{group_id}")
    return list(
        AuditEvent.objects.filter(course=course, object_type="gradebook.score")
        .filter(q)
        .select_related("actor")
        .order_by("-created_at", "-pk")[:100]
    )


# --- imports -------------------------------------------------------------------------------


@dataclass
class ImportPreview:
    problems: list[imports.Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    changes: list[tuple[ScoreChange, float | None]] = field(default_factory=list)  # (change, old)
    unchanged: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def import_plan(*, course: Course, data: bytes, component_key: str = "") -> ImportPreview:
    """What committing `data` would change now (a pure read). `component_key`: for a
    Gradescope export, the component its Total Score is for."""
    parsed = imports.parse_scores(data, selectors.components_of(course), component_key)
    out = ImportPreview(problems=list(parsed.problems), notes=list(parsed.notes))
    emails = {r.who.lower() for r in parsed.rows if r.kind == "email"}
    sids = {r.who for r in parsed.rows if r.kind == "sid"}
    names = {r.who.lower() for r in parsed.rows if r.kind == "group"}
    people = selectors.students_of(course)
    by_email = (
        {u.email.lower(): u for u in people.filter(email__in=_ci(people, emails))} if emails else {}
    )
    by_sid = {u.sid: u for u in people.filter(sid__in=sids)} if sids else {}
    by_group = (
        {g.name.lower(): g for g in Group.objects.filter(course=course, dissolved_at__isnull=True)}
        if names
        else {}
    )
    components = {c.key: c for c in selectors.components_of(course)}
    existing = {
        (e.component_id, e.student_id, e.group_id): e
        for e in ScoreEntry.objects.filter(course=course)
    }
    seen: dict[tuple[str, int, str], int] = {}
    for r in parsed.rows:
        target: dict[str, Any] = {}
        if r.kind == "email":
            target["student"] = by_email.get(r.who.lower())
        elif r.kind == "sid":
            target["student"] = by_sid.get(r.who)
        else:
            target["group"] = by_group.get(r.who.lower())
        if not any(target.values()):
            what = {
                "email": "no student of this course has this e-mail",
                "sid": "no student of this course has this SID",
                "group": "no group of this course has this name",
            }[r.kind]
            out.problems.append(imports.Problem(r.row, r.column_of_who, f"{r.who!r}: {what}"))
            continue
        student, group = target.get("student"), target.get("group")
        holder_pk = group.pk if group is not None else student.pk if student is not None else 0
        for key, value, column in r.scores:
            dup = ("group" if group is not None else "student", holder_pk, key)
            if dup in seen:
                out.problems.append(
                    imports.Problem(
                        r.row,
                        column,
                        f"a second score for the same {dup[0]} (the first is on row {seen[dup]})",
                    )
                )
                continue
            seen[dup] = r.row
            c = components[key]
            e = existing.get((c.pk, student.pk if student else None, group.pk if group else None))
            old = float(e.percent) if e is not None else None
            if old == value and (e is None or not r.note or e.note == r.note):
                out.unchanged += 1
                continue
            out.changes.append((ScoreChange(c, value, r.note, student=student, group=group), old))
    return out


def _ci(people: Any, emails: set[str]) -> Any:
    """E-mails are compared case-insensitively; the database holds them as entered."""
    from django.db.models.functions import Lower

    return people.annotate(e=Lower("email")).filter(e__in=emails).values("email")


def import_upload(
    *, actor: User, course: Course, filename: str, data: bytes, component_key: str = ""
) -> tuple[ScoreImport, ImportPreview]:
    """Store an uploaded score file for its preview. `component_key`: for a Gradescope score
    export (read as downloaded), the component its Total Score is for."""
    _require_staff(actor, course)
    refuse_unreadable(data, max_bytes=imports.MAX_BYTES)
    preview = import_plan(course=course, data=data, component_key=component_key)
    record = ScoreImport.objects.create(
        course=course,
        filename=(filename or "scores.csv")[:200],
        content=data,
        uploaded_by=actor,
        component_key=component_key[:60],
    )
    return record, preview


def import_get(*, actor: User, course: Course, import_id: int) -> ScoreImport:
    _require_staff(actor, course)
    record = ScoreImport.objects.filter(course=course, pk=import_id).first()
    if record is None:
        raise NotFound("No such import in this course.")
    return record


def import_commit(*, actor: User, course: Course, import_id: int) -> dict[str, int]:
    """Apply an uploaded score file, all or nothing: re-planned against the scores as they are
    now; refused (409, nothing changed) if any row has a problem or it was committed before."""
    record = import_get(actor=actor, course=course, import_id=import_id)
    with transaction.atomic():
        record = ScoreImport.objects.select_for_update().get(pk=record.pk)
        if record.committed_at is not None:
            raise Conflict("This file was already imported.")
        plan = import_plan(
            course=course, data=bytes(record.content), component_key=record.component_key
        )
        if not plan.ok:
            raise Conflict(
                f"The file has {len(plan.problems)} problem(s); fix them and upload it again. "
                "Nothing was changed."
            )
        counts = scores_apply(
            actor=actor,
            course=course,
            changes=[c for c, _ in plan.changes],
            action="gradebook.score_imported",
            note=f"import #{record.pk} {record.filename}",
        )
        record.committed_at, record.committed_by = timezone.now(), actor
        record.summary = counts | {"unchanged": counts["unchanged"] + plan.unchanged}
        record.save(update_fields=["committed_at", "committed_by", "summary"])
        audit_record(
            actor=actor,
            action="gradebook.imported",
            course=course,
            obj=record,
            after=record.summary,
        )
    return dict(record.summary)


# --- freezing ------------------------------------------------------------------------------


def grades_freeze(*, actor: User, course: Course, confirm: bool) -> GradeFreeze:
    """Snapshot every student's course grade and refuse changes until unfrozen. Instructors only;
    needs `confirm`."""
    if not is_instructor(actor, course):
        raise NotAllowed("Only instructors may freeze grades.")
    if not confirm:
        raise DomainError(
            "Freezing stops every score change until unfrozen: confirm to go on.", field="confirm"
        )
    with transaction.atomic():
        _lock(course)
        rows = selectors.gradebook_rows(course)
        FrozenGrade.objects.filter(course=course).delete()
        FrozenGrade.objects.bulk_create(
            [
                FrozenGrade(
                    course=course,
                    student_id=r.student.pk,
                    status=r.status,
                    letter=r.letter or "",
                    total=r.total,
                    reason=r.reason[:500],
                    percents=r.percents,
                )
                for r in rows
            ],
            batch_size=1000,
        )
        freeze = GradeFreeze.objects.create(course=course, frozen_by=actor)
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.letter or r.status] = counts.get(r.letter or r.status, 0) + 1
        audit_record(
            actor=actor, action="gradebook.frozen", course=course, obj=freeze, after=counts
        )
    return freeze


def grades_unfreeze(*, actor: User, course: Course, confirm: bool) -> None:
    if not is_instructor(actor, course):
        raise NotAllowed("Only instructors may unfreeze grades.")
    if not confirm:
        raise DomainError("Unfreezing lets scores change again: confirm to go on.", field="confirm")
    with transaction.atomic():
        Course.objects.select_for_update().get(pk=course.pk)
        freeze = GradeFreeze.objects.filter(course=course).first()
        if freeze is None:
            raise Conflict("Grades are not frozen.")
        audit_record(
            actor=actor,
            action="gradebook.unfrozen",
            course=course,
            obj=freeze,
            before={"frozen_at": freeze.frozen_at.isoformat()},
        )
        FrozenGrade.objects.filter(course=course).delete()
        freeze.delete()
