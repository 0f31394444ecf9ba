"""The nightly shutdown (the course file's `compute.scheduled_shutdown`) and a group's request
to keep its node running through one night.

Each night at the course-file time (course time) every RUNNING node is stopped — through the
provider's stop as a cloud job, with its audit row (`autostop`) — except the node of a group
whose opt-out for that night was approved (by staff, or as asked when the course file says
`opt_out: auto`). The night is claimed by a unique row, so two beats (or a repeated run) stop
nothing twice; a beat that was down for more than an hour past the time skips the night.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.compute.board.selectors import group_id_of
from apps.compute.models import Allocation, Node
from apps.compute.recipients import member_emails, staff_emails
from apps.compute.usage import autostop
from apps.compute.usage import rules as usage_rules
from apps.compute.usage.quotas import policy_of
from apps.compute.usage_models import ShutdownNight, ShutdownOptOut, UsagePolicy
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record

OPT_OUTS_PER_PAGE = 25


def describe(course: Course, policy: UsagePolicy) -> str:
    """'02:00 (America/Los_Angeles)' — the time and the zone it is read in."""
    at = policy.shutdown_at
    return f"{at:%H:%M} ({course.timezone})" if at is not None else "none"


def shutdown_run(course: Course, now: dt.datetime | None = None) -> list[str]:
    """Make the night's shutdown if it is due and not made yet. Returns the nodes stopped."""
    from apps.core import outbox

    now = now or timezone.now()
    policy = policy_of(course)
    if policy.shutdown_at is None:
        return []
    tz = course.tz
    night, moment = usage_rules.last_shutdown(now, policy.shutdown_at, tz)
    if not usage_rules.shutdown_due(now, moment):
        return []
    running = list(
        Node.objects.filter(course=course, cloud_status="RUNNING")
        .exclude(status=Node.Status.RETIRED)
        .order_by("name")
    )
    holders = dict(
        Allocation.objects.filter(node__in=running, ended_at__isnull=True).values_list(
            "node_id", "group_id"
        )
    )
    kept_groups = set(
        ShutdownOptOut.objects.filter(
            course=course, night=night, status=ShutdownOptOut.Status.APPROVED
        ).values_list("group_id", flat=True)
    )
    stopped: list[str] = []
    kept: list[str] = []
    when = describe(course, policy)
    try:
        with transaction.atomic():
            claim = ShutdownNight.objects.create(course=course, night=night, at=now)
            mails = []
            for node in running:
                group_id = holders.get(node.pk)
                if group_id in kept_groups:
                    kept.append(node.name)
                    continue
                if autostop.stop_pending(node.pk):
                    stopped.append(node.name)
                    continue
                autostop.auto_stop(
                    course=course,
                    node=node,
                    group_id=group_id,
                    cause="schedule",
                    detail=f"the nightly shutdown of {night:%a %-d %b} at {when}",
                    now=now,
                )
                stopped.append(node.name)
                if group_id:
                    mails.append(
                        outbox.Mail(
                            member_emails(group_id),
                            f"[{course.code}] {node.name} stopped for the night",
                            f"It is {when}: courseops is stopping {node.name}, as the course "
                            "stops running nodes every night (local SSD data is kept). Start it "
                            "again from your node page when you need it; to keep it running "
                            "through a night, ask beforehand: "
                            f"{settings.SITE_URL}/c/{course.code}/node/usage/\n",
                        )
                    )
            claim.stopped, claim.kept = stopped, kept
            claim.save(update_fields=["stopped", "kept"])
            if stopped or kept:
                mails.append(
                    outbox.Mail(
                        staff_emails(course.pk),
                        f"[{course.code}] Nightly shutdown: {len(stopped)} node(s) stopped",
                        f"The shutdown of {night:%a %-d %b} at {when}.\nStopped: "
                        f"{', '.join(stopped) or 'none'}\nKept running (approved opt-outs): "
                        f"{', '.join(kept) or 'none'}\n",
                    )
                )
            outbox.post(
                "compute.nightly_shutdown",
                mails,
                course_id=course.pk,
                run=f"shutdown-{course.pk}-{night.isoformat()}",
            )
    except IntegrityError:
        return []  # another run made this night's shutdown
    return stopped


# ------------------------------------------------------------------ opt-out requests


def _email_group(course: Course, o: ShutdownOptOut) -> None:
    from apps.core import outbox

    words = "approved" if o.status == ShutdownOptOut.Status.APPROVED else "declined"
    note = f"\n\nStaff's note: {o.note}" if o.note else ""
    outbox.post(
        "compute.opt_out_decided",
        [
            outbox.Mail(
                member_emails(o.group_id),
                f"[{course.code}] Keeping your node on the night of {o.night:%a %-d %b}: {words}",
                f"Your request to skip the nightly shutdown of {o.night:%a %-d %b} was {words}."
                + (
                    " Your node keeps running that night."
                    if words == "approved"
                    else " Your node is stopped at the usual time."
                )
                + f"{note}\n{settings.SITE_URL}/c/{course.code}/node/usage/\n",
            )
        ],
        course_id=course.pk,
        run=f"opt-out-{o.pk}-{words}",
    )


def opt_out_request(
    *, actor: User, course: Course, night: dt.date, reason: str, now: dt.datetime | None = None
) -> ShutdownOptOut:
    """A student asks to keep the group's node running through the shutdown of `night`.
    Refused with the reason: no shutdown in the course, no group, a night passed or too far
    ahead, a live request for that night already. Approved at once when the course file says
    `opt_out: auto`. One transaction: the request and its audit row."""
    now = now or timezone.now()
    policy = policy_of(course)
    if policy.shutdown_at is None:
        raise DomainError("This course has no nightly shutdown, so there is nothing to skip.")
    group_id = group_id_of(user=actor, course=course)
    if group_id is None:
        raise NotAllowed("Only a member of a group can ask to keep its node running.")
    reason = reason.strip()
    if not reason:
        raise DomainError("Say what has to keep running through the night.", field="reason")
    problem = usage_rules.opt_out_problem(night, now, policy.shutdown_at, course.tz)
    if problem:
        raise DomainError(problem, field="night")
    auto = policy.opt_out_approval == UsagePolicy.Approval.AUTO
    try:
        with transaction.atomic():
            o = ShutdownOptOut.objects.create(
                course=course,
                group_id=group_id,
                night=night,
                reason=reason[:300],
                requested_by=actor,
                requested_at=now,
                status=ShutdownOptOut.Status.APPROVED if auto else ShutdownOptOut.Status.REQUESTED,
                decided_at=now if auto else None,
                note="Approved as asked: the course's rule." if auto else "",
            )
            audit_record(
                actor=actor,
                action="compute.opt_out_request",
                course=course,
                obj=o,
                after={"night": night.isoformat(), "status": o.status},
                note=reason,
            )
    except IntegrityError:
        live = ShutdownOptOut.objects.filter(
            group_id=group_id,
            night=night,
            status__in=(ShutdownOptOut.Status.REQUESTED, ShutdownOptOut.Status.APPROVED),
        ).first()
        state = live.get_status_display().lower() if live else "pending"
        raise DomainError(
            f"Your group already asked to skip the shutdown of {night:%a %-d %b} ({state}).",
            field="night",
        ) from None
    return o


def _decide(
    *, actor: User, course: Course, opt_out_id: int, status: str, note: str
) -> ShutdownOptOut:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs decide opt-out requests.")
    with transaction.atomic():
        o = ShutdownOptOut.objects.select_for_update().filter(course=course, pk=opt_out_id).first()
        if o is None:
            raise NotFound("No such opt-out request in this course.")
        if o.status != ShutdownOptOut.Status.REQUESTED:
            raise DomainError(f"Request #{o.pk} was already {o.get_status_display().lower()}.")
        policy = policy_of(course)
        if (
            policy.shutdown_at is not None
            and usage_rules.shutdown_instant(o.night, policy.shutdown_at, course.tz)
            <= timezone.now()
            and status == ShutdownOptOut.Status.APPROVED
        ):
            raise DomainError(f"The shutdown of {o.night:%a %-d %b} has already happened.")
        before = {"status": o.status}
        o.status, o.note = status, note.strip()[:300]
        o.decided_by, o.decided_at = actor, timezone.now()
        o.save(update_fields=["status", "note", "decided_by", "decided_at"])
        audit_record(
            actor=actor,
            action=f"compute.opt_out_{status}",
            course=course,
            obj=o,
            before=before,
            after={"status": status},
            note=o.note,
        )
        _email_group(course, o)
    return o


def opt_out_approve(*, actor: User, course: Course, opt_out_id: int) -> ShutdownOptOut:
    """Staff approve: the group's node keeps running that night; the group is e-mailed."""
    return _decide(
        actor=actor,
        course=course,
        opt_out_id=opt_out_id,
        status=ShutdownOptOut.Status.APPROVED,
        note="",
    )


def opt_out_decline(*, actor: User, course: Course, opt_out_id: int, note: str) -> ShutdownOptOut:
    """Staff decline with a reason the group reads; the node is stopped as usual."""
    if not note.strip():
        raise DomainError("Say why, so the group knows what to do instead.", field="note")
    return _decide(
        actor=actor,
        course=course,
        opt_out_id=opt_out_id,
        status=ShutdownOptOut.Status.DECLINED,
        note=note,
    )


def opt_out_list(*, user: User, course: Course) -> QuerySet[ShutdownOptOut]:
    """Staff: every request of the course. A student: the group's own (none without one)."""
    qs = ShutdownOptOut.objects.filter(course=course).select_related(
        "group", "requested_by", "decided_by"
    )
    if is_staff(user, course):
        return qs.order_by("status", "-night", "-pk")
    group_id = group_id_of(user=user, course=course)
    return qs.filter(group_id=group_id) if group_id else qs.none()


def opt_out_page(qs: QuerySet[ShutdownOptOut], number: str | None) -> Page[ShutdownOptOut]:
    return Paginator(qs, OPT_OUTS_PER_PAGE).get_page(number)
