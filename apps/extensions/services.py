"""Extension requests, as Flextensions gives them: a student asks for days on an assignment (for
themselves or their group) or a group's milestone, with a reason, optionally a document and
whether it is a DSP accommodation; the course file's rule approves small early ones at once;
staff answer the rest oldest first — approve, approve with other days, or decline with a
comment — and the student is e-mailed either way. Approving creates the very extension staff
grant by hand, so every page, feed and reminder follows it. Every step is audited."""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.calendar.models import Assignment, Milestone
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.core.transactions import in_callers_transaction
from apps.extensions.models import ExtensionRequest
from apps.groups.models import Group
from apps.groups.selectors import group_for_student
from apps.slackdays import relief
from apps.slackdays.grants import CONFIRM

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
# What a supporting document may be, by its first bytes (the name and the browser's type are
# the sender's word; the bytes are not): PDF, PNG or JPEG.
DOCUMENT_KINDS = {b"%PDF-": "pdf", b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpg"}


def document_kind(data: bytes) -> str:
    """'pdf', 'png' or 'jpg' for an acceptable document, else a DomainError saying why."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DomainError(
            f"The document is {len(data) / 1e6:.1f} MB; the limit is 5 MB.", field="document"
        )
    for magic, kind in DOCUMENT_KINDS.items():
        if data.startswith(magic):
            return kind
    raise DomainError(
        "The document must be a PDF, PNG or JPEG file (this one is none of them).",
        field="document",
    )


def deadline_of(
    course: Course, student: User, *, assignment: Assignment | None, milestone: Milestone | None
) -> dt.datetime:
    """The student's deadline as it stands now (slack days and extensions applied)."""
    if assignment is not None:
        from apps.slackdays.selectors import student_deadlines

        for d in student_deadlines(course=course, student=student):
            if d.assignment.pk == assignment.pk:
                return d.effective
        return assignment.due_at
    if milestone is None:
        raise DomainError("Choose one assignment or one milestone.", field="target")
    from apps.milestones.models import GroupMilestone

    group = group_for_student(course=course, user=student)
    rec = GroupMilestone.objects.filter(milestone=milestone, group=group).first()
    return milestone.due_at + dt.timedelta(hours=rec.extension_hours if rec else 0)


def closes_at(course: Course, deadline: dt.datetime) -> dt.datetime:
    return deadline + dt.timedelta(hours=course.extension_close_hours)


def _target(
    course: Course, assignment_id: int | None, milestone_id: int | None
) -> tuple[Assignment | None, Milestone | None]:
    if bool(assignment_id) == bool(milestone_id):
        raise DomainError("Choose one assignment or one milestone.", field="target")
    if assignment_id:
        a = Assignment.objects.filter(course=course, pk=assignment_id).first()
        if a is None:
            raise NotFound("No such assignment in this course.", field="target")
        return a, None
    m = Milestone.objects.filter(course=course, pk=milestone_id or 0).first()
    if m is None:
        raise NotFound("No such milestone in this course.", field="target")
    return None, m


def request_create(
    *,
    actor: User,
    course: Course,
    days: int,
    reason: str,
    assignment_id: int | None = None,
    milestone_id: int | None = None,
    for_group: bool = False,
    dsp: bool = False,
    document: bytes | None = None,
) -> ExtensionRequest:
    if not is_student(actor, course):
        raise NotAllowed("Only the course's students ask for extensions.")
    assignment, milestone = _target(course, assignment_id, milestone_id)
    if not 1 <= days <= course.extension_max_days:
        raise DomainError(
            f"Ask for 1 to {course.extension_max_days} days (this course's limit); for more, "
            "write to the staff.",
            field="days",
        )
    reason = reason.strip()
    if len(reason) < 10:
        raise DomainError("Say why in a sentence or two; staff read it.", field="reason")
    group = group_for_student(course=course, user=actor) if (for_group or milestone) else None
    if (for_group or milestone) and group is None:
        raise DomainError(
            "You are not in a group; ask for yourself, or join your group first.", field="target"
        )
    kind = document_kind(document) if document else ""
    now = timezone.now()
    if assignment is not None and assignment.release_at > now:
        raise Conflict(f"{assignment.code} is not released yet; ask once it is.")
    deadline = deadline_of(course, actor, assignment=assignment, milestone=milestone)
    closes = closes_at(course, deadline)
    if now > closes:
        raise Conflict(
            "Requests for this deadline closed "
            f"{format_instant(closes, course.timezone)}; write to the staff."
        )
    try:
        with transaction.atomic():
            return _create_locked(
                course, actor, group, assignment, milestone, days, reason, dsp, document, kind, now
            )
    except IntegrityError:
        raise Conflict(
            "You already have an open request on this deadline, or your group has one for the "
            "whole group; staff will answer it."
        ) from None


@in_callers_transaction
def _create_locked(
    course: Course,
    actor: User,
    group: Group | None,
    assignment: Assignment | None,
    milestone: Milestone | None,
    days: int,
    reason: str,
    dsp: bool,
    document: bytes | None,
    kind: str,
    now: dt.datetime,
) -> ExtensionRequest:
    """request_create's transaction. An assignment's request locks its relief (the group's row
    and every reached member's slack account, `relief.relief_lock`) and is judged against the
    deadline's whole relief: past the cap it is refused with the arithmetic or goes to staff
    with it, as the course file says; the rule approves only what fits."""
    judgement = None
    if assignment is not None:
        reached = relief.relief_members(course, group, actor)
        relief.relief_lock(course, group=group, students=reached)
        if group is not None:
            mine = ExtensionRequest.objects.filter(
                group=group, assignment=assignment, status=ExtensionRequest.Status.OPEN
            ).first()
            if mine is not None:
                raise Conflict(
                    f"Your group already has an open request on {assignment.code} "
                    f"({mine.days} day(s), asked by {mine.student.get_full_name()}); staff will "
                    "answer it."
                )
        judgement = relief.relief_judge(
            course, assignment, reached, adding_hours=days * 24, kind="extension", group=group
        )
        if judgement.refusal and course.relief_over_cap == "refuse":
            raise Conflict(judgement.refusal + " Write to the staff for more.")
    elif ExtensionRequest.objects.filter(
        group=group, milestone=milestone, status=ExtensionRequest.Status.OPEN
    ).exists():
        raise Conflict("Your group already has an open request on this milestone.")
    r = ExtensionRequest(
        course=course,
        student=actor,
        group=group,
        assignment=assignment,
        milestone=milestone,
        days=days,
        reason=reason[:2000],
        dsp=dsp,
        relief_note=(judgement.note if judgement else "")[:400],
    )
    if document:
        r.document, r.document_kind = document, kind
    r.save()
    audit_record(
        actor=actor,
        action="extension.requested",
        course=course,
        obj=r,
        after={"days": days, "target": r.target_name, "group": bool(group), "dsp": dsp},
    )
    deadline = deadline_of(course, actor, assignment=assignment, milestone=milestone)
    fits = judgement is None or judgement.refusal is None
    if fits and _auto_approves(course, actor, r, now=now, deadline=deadline):
        _approve(r, actor=None, days=days, comment="Approved by the course's rule.")
    else:
        pk = r.pk
        enqueue_on_commit(
            lambda: task_named("extensions.email_staff").delay(pk),
            what="the extension request e-mail to staff",
            critical=False,
        )
    return r


def _auto_approves(
    course: Course, student: User, r: ExtensionRequest, *, now: dt.datetime, deadline: dt.datetime
) -> bool:
    """The course file's rule: at most `auto_approve_max_days`, asked before the deadline, for
    each student's first `auto_approve_per_student` such approvals, each group's first
    `auto_approve_per_group` (for the whole group) and each deadline's first
    `auto_approve_per_deadline` (the student's own and their group's, on this assignment)."""
    if not course.extension_auto_max_days or r.days > course.extension_auto_max_days:
        return False
    if now >= deadline:
        return False
    auto = ExtensionRequest.objects.filter(course=course, auto=True).exclude(pk=r.pk)
    if auto.filter(student=student).count() >= course.extension_auto_per_student:
        return False
    per_group = course.extension_auto_per_group
    if (
        r.group_id
        and per_group is not None
        and auto.filter(group_id=r.group_id).count() >= (per_group)
    ):
        return False
    per_deadline = course.extension_auto_per_deadline
    target = Q(assignment_id=r.assignment_id) if r.assignment_id else Q(milestone_id=r.milestone_id)
    if per_deadline is not None:
        gid = r.group_id or (
            group.pk if (group := group_for_student(course=course, user=student)) else None
        )
        here = Q(student=student, group__isnull=True) | (Q(group_id=gid) if gid else Q(pk__in=[]))
        if r.group_id:
            members = relief.relief_members(course, Group(pk=r.group_id), student)
            here |= Q(student__in=members, group__isnull=True)
        if auto.filter(target).filter(here).count() >= per_deadline:
            return False
    return True


@in_callers_transaction
def _approve(
    r: ExtensionRequest,
    *,
    actor: User | None,
    days: int,
    comment: str,
    confirmed_days: int | None = None,
) -> None:
    """Grant the extension itself, then mark the request approved (in the caller's
    transaction). `actor` None: the course's rule, recorded as the student's own request."""
    course = r.course
    granter = actor or r.student
    if r.assignment_id:
        from apps.slackdays.models import DeadlineException

        r.exception = DeadlineException.objects.create(
            course=course,
            kind=DeadlineException.Kind.EXTENSION,
            assignment_id=r.assignment_id,
            student=None if r.group_id else r.student,
            group_id=r.group_id,
            hours=days * 24,
            reason=f"Extension request #{r.pk}: {r.reason}"[:300],
            granted_by=granter,
            cap_days_confirmed=confirmed_days,
        )
        group = Group.objects.filter(pk=r.group_id).first() if r.group_id else None
        reached = relief.relief_members(course, group, r.student)
        relief.refund_slack_for_extension(
            course,
            r.assignment,  # type: ignore[arg-type]
            reached,
            actor=granter,
            label=f"extension request #{r.pk}",
        )
        if group is not None and course.extension_group_closes_own:
            _close_own(r, reached, actor=actor)
    else:
        from apps.milestones.models import GroupMilestone

        made, _ = GroupMilestone.objects.get_or_create(
            course=course, milestone_id=r.milestone_id or 0, group_id=r.group_id or 0
        )
        rec = GroupMilestone.objects.select_for_update().get(pk=made.pk)
        rec.extension_hours += days * 24
        rec.extension_reason = f"Extension request #{r.pk}: {r.reason}"[:300]
        rec.save(update_fields=["extension_hours", "extension_reason", "updated_at"])
    r.status = ExtensionRequest.Status.APPROVED
    r.approved_days, r.auto = days, actor is None
    r.comment, r.decided_by, r.decided_at = comment[:2000], actor, timezone.now()
    r.save(
        update_fields=[
            "status",
            "approved_days",
            "auto",
            "comment",
            "decided_by",
            "decided_at",
            "exception",
        ]
    )
    audit_record(
        actor=actor,
        action="extension.approved",
        course=course,
        obj=r,
        after={"days": days, "auto": actor is None, "comment": r.comment},
    )
    pk = r.pk
    enqueue_on_commit(
        lambda: task_named("extensions.email_decision").delay(pk),
        what="the extension decision e-mail",
        critical=False,
    )


@in_callers_transaction
def _close_own(r: ExtensionRequest, members: list[User], *, actor: User | None) -> None:
    """An approved group request closes the members' own open requests on that assignment
    (the course file's `group_request_closes_own`), each saying why."""
    for own in ExtensionRequest.objects.select_for_update().filter(
        course=r.course,
        assignment_id=r.assignment_id or 0,
        student__in=members,
        group__isnull=True,
        status=ExtensionRequest.Status.OPEN,
    ):
        own.status = ExtensionRequest.Status.CLOSED
        own.comment = (
            f"Closed: the group's request #{r.pk} was approved ({r.approved_days} day(s))."
        )
        own.decided_by, own.decided_at = actor, timezone.now()
        own.save(update_fields=["status", "comment", "decided_by", "decided_at"])
        audit_record(actor=actor, action="extension.closed", course=r.course, obj=own)


def decide(
    *,
    actor: User,
    course: Course,
    request_id: int,
    approve: bool,
    days: int | None = None,
    comment: str = "",
    over_cap: bool = False,
) -> ExtensionRequest:
    """Approve (with the days asked, or other days) or decline with a comment. An approval is
    judged against the deadline's whole relief: past the course's cap only with `over_cap`
    (the total confirmed kept on the extension, and a `relief.cap_overridden` audit row). Locks
    the relief (group row, members' accounts in student order), then the request."""
    if not is_staff(actor, course):
        raise NotAllowed("Only course staff decide extension requests.")
    comment = comment.strip()
    with transaction.atomic():
        asked = (
            ExtensionRequest.objects.select_related("student", "assignment", "group")
            .filter(pk=request_id, course=course)
            .first()
        )
        reached: list[User] = []
        if asked is not None and asked.assignment is not None and approve:
            reached = relief.relief_members(course, asked.group, asked.student)
            relief.relief_lock(course, group=asked.group, students=reached)
        r = (
            ExtensionRequest.objects.select_for_update(of=("self",))
            .select_related("course", "student", "assignment", "milestone")
            .filter(pk=request_id, course=course)
            .first()
        )
        if r is None:
            raise NotFound("No such extension request in this course.")
        if r.status != ExtensionRequest.Status.OPEN:
            raise Conflict(f"This request was already {r.get_status_display().lower()}.")
        if approve:
            days = r.days if days is None else days
            if not 1 <= days <= 30:
                raise DomainError("Approve 1 to 30 days.", field="days")
            if days != r.days and not comment:
                raise DomainError(
                    "Say why you approve other days than asked, in a sentence.", field="comment"
                )
            confirmed = None
            if r.assignment is not None:
                j = relief.relief_judge(
                    course,
                    r.assignment,
                    reached,
                    adding_hours=days * 24,
                    kind="extension",
                    group=r.group,
                )
                if j.refusal and not over_cap:
                    raise DomainError(f"{j.refusal} {CONFIRM}", field="days")
                if j.refusal:
                    relief.record_override(
                        course, actor=actor, target=r, judgement=j, what=f"+{days} day(s)"
                    )
                    confirmed = j.confirm_days
            _approve(r, actor=actor, days=days, comment=comment, confirmed_days=confirmed)
            return r
        if not comment:
            raise DomainError("Tell the student why, in a sentence.", field="comment")
        r.status, r.comment = ExtensionRequest.Status.DECLINED, comment[:2000]
        r.decided_by, r.decided_at = actor, timezone.now()
        r.save(update_fields=["status", "comment", "decided_by", "decided_at"])
        audit_record(
            actor=actor,
            action="extension.declined",
            course=course,
            obj=r,
            after={"comment": comment},
        )
        pk = r.pk
        enqueue_on_commit(
            lambda: task_named("extensions.email_decision").delay(pk),
            what="the extension decision e-mail",
            critical=False,
        )
    return r


def withdraw(*, actor: User, course: Course, request_id: int) -> ExtensionRequest:
    with transaction.atomic():
        r = (
            ExtensionRequest.objects.select_for_update()
            .filter(pk=request_id, course=course, student=actor)
            .first()
        )
        if r is None:
            raise NotFound("No such request of yours.")
        if r.status != ExtensionRequest.Status.OPEN:
            raise Conflict(f"This request was already {r.get_status_display().lower()}.")
        r.status, r.comment = ExtensionRequest.Status.CLOSED, "Withdrawn by the student."
        r.decided_at = timezone.now()
        r.save(update_fields=["status", "comment", "decided_at"])
        audit_record(actor=actor, action="extension.withdrawn", course=course, obj=r)
    return r
