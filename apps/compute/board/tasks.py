"""Thin Celery tasks for the board: the e-mails its changes send, and the formation allocation."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from apps.compute.models import Incident
from apps.compute.recipients import member_emails as _member_emails
from apps.compute.recipients import staff_emails as _staff_emails
from apps.core import outbox
from apps.core.timefmt import format_instant


@shared_task(name="compute.notify_staff_of_incident")
def notify_staff_of_incident(incident_id: int) -> int:
    """Email the course's active instructors and TAs about a new incident. Returns how many
    were emailed; safe to run twice (it only sends mail)."""
    incident = (
        Incident.objects.select_related("course", "node", "group", "reported_by")
        .filter(pk=incident_id)
        .first()
    )
    if incident is None:
        return 0
    to = _staff_emails(incident.course_id)
    if not to:
        return 0
    who = (
        f"{incident.reported_by} ({incident.group.name})"
        if incident.group
        else str(incident.reported_by)
    )
    body = (
        f"{who} reported a problem on {incident.node.name}.\n\n"
        f"What: {incident.summary}\n"
        f"When: {format_instant(incident.occurred_at, incident.course.timezone)}\n"
        f"Job IDs: {incident.job_ids or '-'}\n\nRepro:\n{incident.repro or '-'}\n\n"
        f"Logs: {len(incident.logs):,} characters attached in courseops.\n"
        f"{settings.SITE_URL}/c/{incident.course.code}/incidents/\n"
    )
    subject = (
        f"[{incident.course.code}] Incident #{incident.pk} on {incident.node.name}: "
        f"{incident.summary}"
    )
    outbox.post(
        "compute.notify_staff_of_incident",
        [outbox.Mail(to, subject, body)],
        course_id=incident.course_id,
    )
    return len(to)


@shared_task(name="compute.notify_window_closed")
def notify_window_closed(window_id: int, ended_group_id: int) -> int:
    """E-mail the current members of every other group in a window that closed because a group
    ended (or of every group in it, `ended_group_id` 0, when it moved to another node). Returns
    how many were e-mailed; safe to run twice (it only sends mail)."""
    from apps.compute.models import SharingWindow
    from apps.groups.models import GroupMembership

    window = (
        SharingWindow.objects.select_related("course", "requester").filter(pk=window_id).first()
    )
    if window is None:
        return 0
    groups = {window.requester_id, *window.nodes.values_list("owner_id", flat=True)}
    groups.discard(ended_group_id)
    to = sorted(
        set(
            GroupMembership.objects.filter(group_id__in=groups, left_at__isnull=True).values_list(
                "user__email", flat=True
            )
        )
    )
    if not to:
        return 0
    course = window.course
    mail = outbox.Mail(
        to,
        f"[{course.code}] Sharing window #{window.pk} is {window.get_status_display().lower()}",
        f"Window #{window.pk} ({window.purpose or 'multi-node run'}) is now "
        f"{window.get_status_display().lower()}: {window.note}\n"
        + ("Its launch files are" if window.status == "approved" else "Request a new one")
        + f" on your node page: {settings.SITE_URL}/c/{course.code}/node/\n",
    )
    outbox.post("compute.notify_window_closed", [mail], course_id=course.pk)
    return len(to)


@shared_task(name="compute.notify_formation")
def notify_formation(course_id: int, allocation_ids: list[int], leftover: list[str]) -> int:
    """After the formation allocation: each allocated group's members get their node, IP and SSH
    line; the staff get the list of groups left to them. Returns how many e-mails were sent."""
    from apps.compute.models import Allocation
    from apps.core.models import Course

    course = Course.objects.filter(pk=course_id).first()
    if course is None:
        return 0
    mails: list[outbox.Mail] = []
    allocations = Allocation.objects.filter(pk__in=allocation_ids).select_related(
        "group", "node", "static_ip"
    )
    from apps.compute.board.logins import login_names
    from apps.groups.models import GroupMembership

    for a in allocations:
        # One e-mail per member: each gets their own login name on the node.
        members = dict(
            GroupMembership.objects.filter(group_id=a.group_id, left_at__isnull=True).values_list(
                "user_id", "user__email"
            )
        )
        logins = login_names(course.pk, list(members), os_login=a.node.os_login)
        for user_id, email in sorted(members.items()):
            mails.append(
                outbox.Mail(
                    [email],
                    f"[{course.code}] {a.group.name}: your node is {a.node.name}",
                    f"Group formation is done. {a.group.name} holds {a.node.name} "
                    f"({a.node.gpu_count}× {a.node.gpu_model}, {a.node.zone}) with the static IP "
                    f"{a.static_ip.address}.\n\n"
                    f"Log in with:\n    ssh {logins.get(user_id, 'YOUR_USERNAME')}@"
                    f"{a.static_ip.address}\n\n"
                    f"courseops puts the SSH keys on your profile onto the node; add yours at "
                    f"{settings.SITE_URL}/accounts/ssh-keys/ if you have not.\n\n"
                    f"SSH config, /etc/hosts block and launch files: "
                    f"{settings.SITE_URL}/c/{course.code}/node/\n",
                )
            )
    staff = _staff_emails(course.pk)
    if staff:
        left = "\n".join(f"- {g}" for g in leftover) or "- none"
        mail = outbox.Mail(
            staff,
            f"[{course.code}] Formation allocation: {len(allocation_ids)} groups allocated, "
            f"{len(leftover)} left to you",
            f"{len(allocation_ids)} groups received a node and an IP.\n\n"
            f"Left to you (merge or fill them, or allocate with a reason on the compute board):\n"
            f"{left}\n\n{settings.SITE_URL}/c/{course.code}/compute/\n",
        )
        mails.append(mail)
    outbox.post("compute.notify_formation", mails, course_id=course.pk)
    return len(mails)


@shared_task(name="compute.allocate_at_formation")
def allocate_at_formation_due() -> int:
    """Beat: run the formation allocation of every course whose deadline has passed. Returns how
    many groups were allocated; running it again allocates nobody twice."""
    from django.utils import timezone

    from apps.compute.board.formation import allocate_at_formation, due_courses

    now = timezone.now()
    return sum(len(allocate_at_formation(course=c, now=now).allocated) for c in due_courses(now))


@shared_task(name="compute.notify_node_move")
def notify_node_move(move_id: int) -> int:
    """E-mail the group the answer to its move request. Returns how many were e-mailed."""
    from apps.compute.models import NodeMove

    move = (
        NodeMove.objects.select_related("course", "group", "from_node", "to_node")
        .filter(pk=move_id)
        .first()
    )
    if move is None:
        return 0
    to = _member_emails(move.group_id)
    if not to:
        return 0
    course = move.course
    if move.to_node is not None:
        body = (
            f"{move.group.name} now holds {move.to_node.name} instead of {move.from_node.name}. "
            "Your static IP is unchanged, so SSH works as before once the node is set up; "
            f"download the new files: {settings.SITE_URL}/c/{course.code}/node/\n"
        )
    else:
        body = f"The move off {move.from_node.name} was declined: {move.note}\n"
    mail = outbox.Mail(to, f"[{course.code}] Node move: {move.get_status_display()}", body)
    outbox.post("compute.notify_node_move", [mail], course_id=course.pk)
    return len(to)
