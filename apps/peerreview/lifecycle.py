"""How peer review reacts when a group ends (lifecycle events, in the group change's
transaction): the group leaves every round still open (due after the change). An unpublished
round drops it from the proposal; a published one is re-paired through the exclusion path,
keeping as many published pairs (and their reviews) as the rules allow. When the rest cannot be
re-paired, the pairs naming the group are removed and the audit row asks staff to re-pair:
a group change is never refused because of a pairing."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.errors import Conflict
from apps.core.lifecycle import GroupDissolved, GroupMerged, LifecycleEvent
from apps.core.models import Course
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.peerreview.models import PeerAssignment, PeerExclusion, PeerRound
from apps.peerreview.services import exclude_locked


@in_callers_transaction
def _leave_open_rounds(event: LifecycleEvent, group_id: int) -> None:
    rounds = PeerRound.objects.select_for_update().filter(course=event.course, due_at__gt=event.at)
    for r in rounds.order_by("pk"):
        if PeerExclusion.objects.filter(round=r, group_id=group_id).exists():
            continue
        in_proposal = any(group_id in pair for pair in r.proposal or [])
        pairs = PeerAssignment.objects.filter(round=r).filter(
            Q(reviewer_id=group_id) | Q(reviewee_id=group_id)
        )
        if not in_proposal and not pairs.exists():
            continue
        before = set(
            PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id")
        )
        try:
            with transaction.atomic():
                exclude_locked(
                    actor=event.actor,
                    course=event.course,
                    r=r,
                    group_id=group_id,
                    after=event.caused_by(),
                )
        except Conflict as exc:
            pairs.delete()
            audit_record(
                actor=event.actor,
                action="peer.pairs_removed",
                course=event.course,
                obj=r,
                after={"group": group_id, **event.caused_by()},
                note=f"{exc.message} Re-pair the round.",
            )
        if r.published_at:
            _tell_repaired(r, before, group_id)


def _tell_repaired(r: PeerRound, before: set[tuple[int, int]], ended: int) -> None:
    """E-mail, after commit, every other reviewing group whose published pairs changed."""
    after = set(PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id"))
    changed = {g for pair in before ^ after for g in pair} - {ended}
    if changed:
        enqueue_on_commit(
            lambda: task_named("peerreview.email_pairing").delay(r.pk, sorted(changed)),
            what=f"peer-review re-pairing e-mail for round {r.pk}",
            critical=False,
        )


def on_group_dissolved(event: GroupDissolved) -> None:
    _leave_open_rounds(event, event.group_id)


def on_group_merged(event: GroupMerged) -> None:
    _leave_open_rounds(event, event.source_id)


def dissolve_preview(course: Course, group_id: int) -> list[str]:
    """What dissolving the group does to peer review, for the confirmation page."""
    n = (
        PeerAssignment.objects.filter(round__course=course, round__due_at__gt=timezone.now())
        .filter(Q(reviewer_id=group_id) | Q(reviewee_id=group_id))
        .values("round_id")
        .distinct()
        .count()
    )
    if not n:
        return []
    return [f"It leaves {n} open peer-review round(s); the rest are re-paired and e-mailed."]


def open_pairs_of_ended_groups(course_id: int) -> list[str]:
    """No pair of a round still open names a group that ended before its due date."""
    return [
        f"round #{a.round_id}: {a.reviewer.name} → {a.reviewee.name} names an ended group"
        for a in PeerAssignment.objects.filter(round__course_id=course_id)
        .filter(
            Q(reviewer__dissolved_at__lt=F("round__due_at"))
            | Q(reviewee__dissolved_at__lt=F("round__due_at"))
        )
        .select_related("reviewer", "reviewee")
    ]
