"""Writes: students add and remove their group's evidence until the impact update closes (the
course's `impact-update` milestone, May 15); staff score items and each group's impact. Every
write is one transaction with an audit row."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.core import integrity
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.groups.models import Group
from apps.groups.selectors import group_for_student
from apps.impact.models import KINDS, GroupImpact, ImpactItem, ImpactScoreGiven
from apps.impact.rules import url_problem

CLOSES_KEY = "impact-update"


def closes_at(course: Course) -> dt.datetime | None:
    return (
        Milestone.objects.filter(course=course, key=CLOSES_KEY)
        .values_list("due_at", flat=True)
        .first()
    )


def _student_group(actor: User, course: Course, *, item: ImpactItem | None = None) -> Group:
    """The student's group, open for changes; with `item`, one of that group's items (404 for
    another group's, before anything else is said about it)."""
    if not is_student(actor, course):
        raise NotAllowed("Only students record their group's evidence; staff score it.")
    group = group_for_student(user=actor, course=course)
    if item is not None and (group is None or item.group_id != group.pk):
        raise NotFound("No such evidence item.")
    if group is None:
        raise Conflict("Join a group first: impact evidence is recorded per project group.")
    closes = closes_at(course)
    if closes is not None and timezone.now() > closes:
        raise Conflict(
            f"The impact update closed {format_instant(closes, course.timezone)}; ask staff to add "
            "late evidence."
        )
    return group


def item_add(
    *,
    actor: User,
    course: Course,
    kind: str,
    url: str,
    happened_on: dt.date,
    claim: str,
    ai_used: bool | str | None,
    ai_description: str = "",
) -> ImpactItem:
    """Record one evidence item for the student's group, with its integrity declaration. The URL
    is checked for form only."""
    if kind not in dict(KINDS):
        raise DomainError(f"kind is one of {', '.join(dict(KINDS))}.", field="kind")
    if (problem := url_problem(url)) is not None:
        raise DomainError(problem, field="url")
    if not claim.strip():
        raise DomainError("Say in one sentence what the evidence shows.", field="claim")
    if happened_on > timezone.localdate() + dt.timedelta(days=1):
        raise DomainError("The date is in the future.", field="happened_on")
    used, described = integrity.check(ai_used, ai_description)
    with transaction.atomic():
        group = _student_group(actor, course)
        item = ImpactItem.objects.create(
            course=course,
            group=group,
            kind=kind,
            url=url.strip(),
            happened_on=happened_on,
            claim=claim.strip()[:300],
            added_by=actor,
            ai_used=used,
            ai_description=described,
        )
        audit_record(
            actor=actor,
            action="impact.item_added",
            course=course,
            obj=item,
            after={"kind": kind, "url": item.url, "claim": item.claim},
        )
    return item


def item_remove(*, actor: User, course: Course, item_id: int) -> None:
    with transaction.atomic():
        staff = is_staff(actor, course)
        item = ImpactItem.objects.select_for_update().filter(course=course, pk=item_id).first()
        if item is None:
            raise NotFound("No such evidence item.")
        if not staff:
            _student_group(actor, course, item=item)
        audit_record(
            actor=actor,
            action="impact.item_removed",
            course=course,
            obj=item,
            before={"kind": item.kind, "url": item.url, "claim": item.claim},
        )
        item.delete()


def _percent(value: float | str | None, field: str) -> Decimal | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        x = Decimal(str(value).strip().removesuffix("%").strip())
    except ArithmeticError:
        raise DomainError(f"{value!r} is not a number.", field=field) from None
    if not x.is_finite() or not 0 <= x <= 100:
        raise DomainError(f"{value!r} is outside 0–100.", field=field)
    return x.quantize(Decimal("0.01"))


def item_score(
    *, actor: User, course: Course, item_id: int, score: float | str | None, note: str = ""
) -> ImpactItem:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs score evidence.")
    value = _percent(score, "score")
    with transaction.atomic():
        item = ImpactItem.objects.select_for_update().filter(course=course, pk=item_id).first()
        if item is None:
            raise NotFound("No such evidence item.")
        before = {"score": item.score, "note": item.staff_note}
        item.score = None if value is None else int(value)
        item.staff_note = note.strip()[:300]
        item.save(update_fields=["score", "staff_note"])
        audit_record(
            actor=actor,
            action="impact.item_scored",
            course=course,
            obj=item,
            before=before,
            after={"score": item.score, "note": item.staff_note},
        )
    return item


def group_score(
    *, actor: User, course: Course, group_id: int, percent: float | str | None, note: str = ""
) -> GroupImpact | None:
    """Set (or clear, with None) a group's impact score, which the gradebook's impact component
    reads. Audited with the old and new value."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs score impact.")
    value = _percent(percent, "percent")
    with transaction.atomic():
        group = (
            Group.objects.select_for_update()
            .filter(course=course, pk=group_id, dissolved_at__isnull=True)
            .first()
        )
        if group is None:
            raise NotFound("No such group in this course.")
        row = GroupImpact.objects.filter(group=group).first()
        before = {"percent": float(row.percent) if row else None}
        if value is None:
            if row is not None:
                row.delete()
            result = None
        else:
            result, _ = GroupImpact.objects.update_or_create(
                group=group,
                defaults={
                    "course": course,
                    "percent": value,
                    "note": note.strip()[:300],
                    "scored_by": actor,
                },
            )
        if before["percent"] != (float(value) if value is not None else None):
            ImpactScoreGiven.objects.create(
                course=course, group=group, percent=value, given_by=actor
            )
        audit_record(
            actor=actor,
            action="impact.group_scored",
            course=course,
            obj=group,
            before=before,
            after={
                "percent": float(value) if value is not None else None,
                "note": note.strip()[:300],
            },
        )
    return result
