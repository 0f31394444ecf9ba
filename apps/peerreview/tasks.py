"""Peer-review e-mails, sent by a worker after publishing commits."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from apps.core import outbox
from apps.groups.models import GroupMembership
from apps.peerreview.models import PeerAssignment, PeerRound


@shared_task(name="peerreview.email_pairing")
def email_pairing(round_id: int, only_groups: list[int] | None = None) -> int:
    """Each member of each reviewing group: whom they review and by when. Safe to run twice.
    `only_groups`: just these groups, told that their pairing changed (a group ended)."""
    r = PeerRound.objects.select_related("course").filter(pk=round_id).first()
    if r is None:
        return 0
    targets: dict[int, list[str]] = {}
    for a in PeerAssignment.objects.filter(round=r).select_related("reviewee"):
        if only_groups is None or a.reviewer_id in only_groups:
            targets.setdefault(a.reviewer_id, []).append(a.reviewee.name)
    members = GroupMembership.objects.filter(
        group_id__in=targets, left_at__isnull=True
    ).values_list("group_id", "user__email")
    due = r.due_at.astimezone(r.course.tz).strftime("%a %b %d, %H:%M")
    changed = " (changed: a group left the course)" if only_groups is not None else ""
    messages = [
        outbox.Mail(
            [email],
            f"[{r.course.code}] {r.title}: whom your group reviews{changed}",
            f"Your group reviews {', '.join(targets[g])}. Reviews are due {due}; the drafts and "
            f"the form are at {settings.SITE_URL}/c/{r.course.code}/peer-review/",
        )
        for g, email in members
    ]
    outbox.post("peerreview.email_pairing", messages, course_id=r.course_id)
    return len(messages)
