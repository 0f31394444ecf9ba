"""Writes of milestone records and milestone dates.

Each service locks the group's record (created on first touch, unique per milestone and group)
before changing it, writes an audit row in the same transaction and never takes slack days.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.calendar.moves import MoveImpact, PersonMove, deadline_moved_notify
from apps.core import integrity
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.links import link_problem
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.groups.models import Group, GroupMembership
from apps.milestones import rules
from apps.milestones.models import GroupMilestone
from apps.milestones.selectors import group_of

MAX_EXTENSION_HOURS = 24 * 30
MAX_SOURCES = 4000
SOURCES_MISSING = (
    "{name} asks for a sources and AI-use statement: say what you used (code, papers, AI "
    "assistants) and where in the submission, or “none”."
)


def _milestone(course: Course, milestone_id: int, *, tracked: bool = True) -> Milestone:
    m = Milestone.objects.filter(course=course, pk=milestone_id).first()
    if m is None:
        raise NotFound("No such milestone in this course.", field="milestone")
    if tracked and not m.tracked:
        raise DomainError(
            f"{m.name} is a date only; groups record nothing for it.", field="milestone"
        )
    return m


def _record_locked(course: Course, m: Milestone, group: Group) -> GroupMilestone:
    rec, _ = GroupMilestone.objects.get_or_create(course=course, milestone=m, group=group)
    return GroupMilestone.objects.select_for_update().get(pk=rec.pk)


def _check_link(link: str) -> str:
    problem = link_problem(
        link,
        missing="Give the full address of the submission, starting with https:// "
        "(e.g. a Gradescope, Overleaf, Google Docs or GitHub link).",
    )
    if problem is not None:
        raise DomainError(problem, field="link")
    return link.strip()


def milestone_submit(
    *,
    actor: User,
    course: Course,
    milestone_id: int,
    link: str,
    ai_used: bool | str | None,
    ai_description: str = "",
    sources: str = "",
) -> GroupMilestone:
    """Any current member records (or replaces) the group's link with its integrity declaration
    (external code or AI assistants used, described when yes) and, where the milestone requires
    it, its sources and AI-use statement (what was used, where); the time is now, so a link
    recorded after the group's deadline makes the milestone late."""
    if not is_student(actor, course):
        raise NotAllowed("Only students record their group's milestones.")
    m = _milestone(course, milestone_id)
    link = _check_link(link)
    sources = (sources or "").replace("\x00", "").strip()
    if m.sources_required and not sources:
        raise DomainError(SOURCES_MISSING.format(name=m.name), field="sources")
    if len(sources) > MAX_SOURCES:
        raise DomainError(
            f"Keep the sources statement under {MAX_SOURCES} characters.", field="sources"
        )
    used, described = integrity.check(ai_used, ai_description)
    group = group_of(course=course, user=actor)
    if group is None:
        raise DomainError("You are not in a group yet; join one first.", field="milestone")
    with transaction.atomic():
        rec = _record_locked(course, m, group)
        before = {
            "link": rec.link,
            "submitted_at": rec.submitted_at.isoformat() if rec.submitted_at else None,
        }
        rec.link, rec.submitted_at, rec.submitted_by = link, timezone.now(), actor
        rec.ai_used, rec.ai_description = used, described
        rec.sources = sources
        rec.save(
            update_fields=[
                "sources",
                "link",
                "submitted_at",
                "submitted_by",
                "ai_used",
                "ai_description",
                "updated_at",
            ]
        )
        status = rules.milestone_status(
            due=m.due_at,
            extension_hours=rec.extension_hours,
            submitted_at=rec.submitted_at,
            excused=rec.excused,
        )
        audit_record(
            actor=actor,
            action="milestone.submitted",
            course=course,
            obj=rec,
            before=before,
            after={"link": link, "status": status.value, "ai_used": used},
        )
    return rec


def milestone_sources_require(
    *, actor: User, course: Course, milestone_id: int, required: bool
) -> Milestone:
    """Staff ask (or stop asking) groups for a sources and AI-use statement on a tracked
    milestone; records made before keep what they said. Audited before → after."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs change what a milestone asks.")
    with transaction.atomic():
        m = Milestone.objects.select_for_update().filter(course=course, pk=milestone_id).first()
        if m is None:
            raise NotFound("No such milestone in this course.", field="milestone")
        if not m.tracked:
            raise DomainError(f"{m.name} is a date only; groups record nothing for it.")
        before = {"sources_required": m.sources_required}
        m.sources_required = required
        m.save(update_fields=["sources_required"])
        audit_record(
            actor=actor,
            action="milestone.sources_required",
            course=course,
            obj=m,
            before=before,
            after={"sources_required": required},
        )
    return m


def _staff_group(actor: User, course: Course, group_id: int) -> Group:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs grant extensions and excuses.")
    group = Group.objects.filter(course=course, pk=group_id, dissolved_at__isnull=True).first()
    if group is None:
        raise NotFound("No such group in this course.", field="group")
    return group


def milestone_extend(
    *, actor: User, course: Course, milestone_id: int, group_id: int, hours: int, reason: str
) -> GroupMilestone:
    """Staff set a group's extension on one milestone (hours after the due time; 0 removes it).
    A reason is required; audited before → after."""
    group = _staff_group(actor, course, group_id)
    m = _milestone(course, milestone_id)
    if not 0 <= hours <= MAX_EXTENSION_HOURS:
        raise DomainError(f"An extension is 0 to {MAX_EXTENSION_HOURS} hours.", field="hours")
    if not reason.strip():
        raise DomainError("Say why (it is kept in the audit trail).", field="reason")
    with transaction.atomic():
        rec = _record_locked(course, m, group)
        before = {"extension_hours": rec.extension_hours}
        rec.extension_hours, rec.extension_reason = hours, reason.strip()[:300]
        rec.save(update_fields=["extension_hours", "extension_reason", "updated_at"])
        audit_record(
            actor=actor,
            action="milestone.extended",
            course=course,
            obj=rec,
            before=before,
            after={"extension_hours": hours},
            note=rec.extension_reason,
        )
    return rec


def milestone_excuse(
    *, actor: User, course: Course, milestone_id: int, group_id: int, excused: bool, reason: str
) -> GroupMilestone:
    """Staff excuse a group from a milestone (or take the excuse back). Audited."""
    group = _staff_group(actor, course, group_id)
    m = _milestone(course, milestone_id)
    if excused and not reason.strip():
        raise DomainError("Say why the group is excused.", field="reason")
    with transaction.atomic():
        rec = _record_locked(course, m, group)
        before = {"excused": rec.excused}
        rec.excused, rec.excuse_reason = excused, reason.strip()[:300]
        rec.save(update_fields=["excused", "excuse_reason", "updated_at"])
        audit_record(
            actor=actor,
            action="milestone.excused" if excused else "milestone.unexcused",
            course=course,
            obj=rec,
            before=before,
            after={"excused": excused},
            note=rec.excuse_reason,
        )
    return rec


def milestone_move_impact(
    *, course: Course, milestone: Milestone, new_due: dt.datetime
) -> MoveImpact:
    """Who a move of the milestone reaches: every current member of every live group, with the
    group's extension named where there is one."""
    impact = MoveImpact(what=milestone.name, old_due=milestone.due_at, new_due=new_due)
    ext = dict(
        GroupMilestone.objects.filter(milestone=milestone).values_list(
            "group_id", "extension_hours"
        )
    )
    rows = (
        GroupMembership.objects.filter(
            course=course, left_at__isnull=True, group__dissolved_at__isnull=True
        )
        .select_related("user")
        .order_by("group__name", "user__full_name")
    )
    groups = set()
    for gm in rows:
        hours = ext.get(gm.group_id, 0)
        groups.add(gm.group_id)
        impact.people.append(
            PersonMove(
                gm.user_id,
                gm.user.get_full_name() or gm.user.email,
                gm.user.email,
                rules.group_due(milestone.due_at, hours),
                rules.group_due(new_due, hours),
                f"group extension +{hours} h" if hours else "",
            )
        )
    impact.groups = len(groups)
    return impact


def milestone_update(
    *,
    actor: User,
    course: Course,
    milestone_id: int,
    name: str | None = None,
    due_at: dt.datetime | None = None,
    confirm: bool = False,
) -> tuple[Milestone, MoveImpact | None]:
    """Staff rename or move a milestone. A move needs `confirm` (the caller has shown the
    impact); on confirmation it bumps the revision, audits, and e-mails every affected person
    once after commit. Returns the milestone and the impact of the move (None if not moved)."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs edit the calendar.")
    with transaction.atomic():
        m = Milestone.objects.select_for_update().filter(course=course, pk=milestone_id).first()
        if m is None:
            raise NotFound("No such milestone in this course.")
        before = {"name": m.name, "due_at": m.due_at.isoformat()}
        impact = None
        if name is not None:
            if not name.strip():
                raise DomainError("A milestone needs a name.", field="name")
            m.name = name.strip()[:200]
        if due_at is not None and due_at != m.due_at:
            impact = milestone_move_impact(course=course, milestone=m, new_due=due_at)
            if not confirm:
                raise DomainError(
                    f"Moving {m.name} changes the deadline of {impact.count} students in "
                    f"{impact.groups} groups; look at the impact and confirm.",
                    field="confirm",
                )
            m.due_at = due_at
        after = {"name": m.name, "due_at": m.due_at.isoformat()}
        if after != before:
            m.revision += 1
            m.save()
            audit_record(
                actor=actor,
                action="milestone.updated",
                course=course,
                obj=m,
                before=before,
                after=after,
            )
            if impact is not None:
                deadline_moved_notify(
                    course=course, impact=impact, path=f"/c/{course.code}/milestones/"
                )
    return m, impact
