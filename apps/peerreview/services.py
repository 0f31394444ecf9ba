"""Peer-review writes: rounds, avoided pairs, exclusions, pairing preview and publishing, re-pairing
after an exclusion with the fewest changes, and reviews saved with a version check."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.compute.models import SharingWindow, WindowNode
from apps.core import integrity
from apps.core.errors import Conflict, DomainError, NotFound
from apps.core.models import Course, User
from apps.core.queue import enqueue_on_commit
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.groups.models import Group, GroupMembership
from apps.milestones.models import GroupMilestone
from apps.peerreview import pairing
from apps.peerreview.models import (
    CRITERIA,
    PeerAssignment,
    PeerAvoid,
    PeerExclusion,
    PeerReview,
    PeerRound,
)

MIN_COMMENT = 40  # characters for each written part of a submitted review


def round_get(course: Course, round_id: int) -> PeerRound:
    r = PeerRound.objects.filter(course=course, pk=round_id).select_related("milestone").first()
    if r is None:
        raise NotFound("No such peer-review round.")
    return r


def round_create(
    *,
    actor: User,
    course: Course,
    milestone_id: int,
    due_at: dt.datetime,
    k: int = 1,
    show_reviewers: bool = False,
    title: str = "",
) -> PeerRound:
    milestone = Milestone.objects.filter(course=course, pk=milestone_id).first()
    if milestone is None:
        raise DomainError("Choose one of the course's milestones.", field="milestone")
    if not 1 <= k <= 5:
        raise DomainError("Each group reviews between 1 and 5 others.", field="k")
    with transaction.atomic():
        r = PeerRound.objects.create(
            course=course,
            milestone=milestone,
            due_at=due_at,
            k=k,
            show_reviewers=show_reviewers,
            title=title or f"Peer review of {milestone.name}",
        )
        audit_record(actor=actor, action="peer.round_create", course=course, obj=r)
    return r


def groups_in(r: PeerRound) -> list[Group]:
    """Groups with a current member, minus those staff left out."""
    out = set(PeerExclusion.objects.filter(round=r).values_list("group_id", flat=True))
    return [
        g
        for g in Group.objects.filter(
            course=r.course, dissolved_at__isnull=True, memberships__left_at__isnull=True
        )
        .distinct()
        .order_by("name")
        if g.pk not in out
    ]


def problem_for(r: PeerRound, *, seed: int | None = None) -> pairing.PairingProblem:
    groups = groups_in(r)
    avoid = {
        frozenset(x)
        for x in PeerAvoid.objects.filter(round=r).values_list("group_a_id", "group_b_id")
    }
    shared = {
        frozenset((req, owner))
        for req, owner in WindowNode.objects.filter(
            window__course=r.course, window__status=SharingWindow.Status.APPROVED
        ).values_list("window__requester_id", "owner_id")
        if req != owner
    }
    # Pairs of the course's earlier published rounds, either way round: avoided when possible,
    # as Canvas does, so a group meets new reviewers.
    earlier = {
        frozenset(x)
        for x in PeerAssignment.objects.filter(
            round__course=r.course, round__published_at__isnull=False
        )
        .exclude(round=r)
        .values_list("reviewer_id", "reviewee_id")
    }
    return pairing.PairingProblem(
        [g.pk for g in groups],
        k=r.k,
        avoid=avoid,
        prefer_not=shared | earlier,
        seed=r.seed if seed is None else seed,
        names={g.pk: g.name for g in groups},
    )


def avoid_add(
    *, actor: User, course: Course, round_id: int, group_a: int, group_b: int, reason: str = ""
) -> PeerAvoid:
    r = round_get(course, round_id)
    a, b = sorted((group_a, group_b))
    if a == b or Group.objects.filter(course=course, pk__in=[a, b]).count() != 2:
        raise DomainError("Name two different groups of this course.", field="group_b")
    with transaction.atomic():
        row, _ = PeerAvoid.objects.get_or_create(
            round=r, group_a_id=a, group_b_id=b, defaults={"reason": reason[:200]}
        )
        audit_record(actor=actor, action="peer.avoid_add", course=course, obj=row)
    return row


def preview(
    *, actor: User, course: Course, round_id: int, seed: int | None = None
) -> pairing.Pairing:
    """Compute a pairing for the seed (the round's, or a new one: a re-roll) and keep it as the
    proposal to publish. Refused after publishing: exclusions re-pair from then on."""
    with transaction.atomic():
        r = PeerRound.objects.select_for_update().get(pk=round_get(course, round_id).pk)
        if r.published_at:
            raise Conflict("Already published; leave a group out to re-pair the rest.")
        if seed is not None:
            r.seed = seed
        result = pairing.pair(problem_for(r))
        r.proposal = [list(x) for x in result.pairs]
        r.proposal_reasons = result.reasons
        r.save(update_fields=["seed", "proposal", "proposal_reasons"])
    return result


def proposal_swap(
    *, actor: User, course: Course, round_id: int, reviewer_a: int, reviewer_b: int
) -> list[str]:
    """Trade the reviewees of two reviewers by hand; refused with every rule it would break."""
    with transaction.atomic():
        r = PeerRound.objects.select_for_update().get(pk=round_get(course, round_id).pk)
        if r.published_at:
            raise Conflict("Already published.")
        pairs = [tuple(x) for x in r.proposal]
        ta = [b for a, b in pairs if a == reviewer_a]
        tb = [b for a, b in pairs if a == reviewer_b]
        if len(ta) != 1 or len(tb) != 1:
            raise DomainError("Swapping by hand works when each group reviews one other (k = 1).")
        new = [(a, tb[0] if a == reviewer_a else ta[0] if a == reviewer_b else b) for a, b in pairs]
        broken = pairing.check(problem_for(r), new)
        if broken:
            raise DomainError("Not swapped: " + "; ".join(broken[:4]) + ".")
        r.proposal = [list(x) for x in sorted(new)]
        r.save(update_fields=["proposal"])
        audit_record(actor=actor, action="peer.proposal_swap", course=course, obj=r)
    return []


def without_draft(r: PeerRound, group_ids: Iterable[int]) -> list[str]:
    """Names of the groups among `group_ids` that have recorded no draft for the round's
    milestone (no submitted link), alphabetically."""
    ids = set(group_ids)
    recorded = set(
        GroupMilestone.objects.filter(
            milestone=r.milestone, group_id__in=ids, submitted_at__isnull=False
        ).values_list("group_id", flat=True)
    )
    return sorted(
        Group.objects.filter(pk__in=ids - recorded).values_list("name", flat=True), key=str.lower
    )


class DraftsMissing(Conflict):
    """Publishing would send reviewers to groups with nothing to review yet: staff confirm."""

    code = "drafts_missing"


def publish(*, actor: User, course: Course, round_id: int, without_drafts: bool = False) -> int:
    """Publish the proposed pairing. When reviewed groups have no draft recorded, refused with
    their names unless staff confirm (`without_drafts`): their reviewers would wait, or staff
    leave them out first."""
    with transaction.atomic():
        r = PeerRound.objects.select_for_update().get(pk=round_get(course, round_id).pk)
        if r.published_at:
            raise Conflict("This round is already published.")
        if not r.proposal:
            raise Conflict("Preview a pairing first.")
        missing = without_draft(r, {b for _, b in r.proposal})
        if missing and not without_drafts:
            raise DraftsMissing(
                f"{len(missing)} reviewed group(s) have no draft of {r.milestone.name} recorded: "
                f"{', '.join(missing)}. Confirm to publish anyway (their reviewers wait for the "
                "draft), or leave them out first."
            )
        broken = pairing.check(problem_for(r), [(a, b) for a, b in r.proposal])
        if broken:
            raise Conflict(
                "The pairing no longer holds (groups or avoided pairs changed): "
                + "; ".join(broken[:3])
            )
        PeerAssignment.objects.bulk_create(
            [PeerAssignment(round=r, reviewer_id=a, reviewee_id=b) for a, b in r.proposal]
        )
        r.published_at = timezone.now()
        r.save(update_fields=["published_at"])
        audit_record(
            actor=actor,
            action="peer.publish",
            course=course,
            obj=r,
            after={"pairs": len(r.proposal)},
        )
        from apps.peerreview.tasks import email_pairing

        enqueue_on_commit(
            lambda: email_pairing.delay(r.pk), what="the peer-review e-mails", critical=False
        )
    return len(r.proposal)


def exclude(*, actor: User, course: Course, round_id: int, group_id: int, reason: str = "") -> int:
    """Leave a group out. After publishing, the rest are re-paired keeping as many published
    pairs (and their reviews) as the rules allow; returns how many pairs changed."""
    with transaction.atomic():
        r = PeerRound.objects.select_for_update().get(pk=round_get(course, round_id).pk)
        if not Group.objects.filter(course=course, pk=group_id).exists():
            raise NotFound("No such group.")
        return exclude_locked(
            actor=actor, course=course, r=r, group_id=group_id, after={"reason": reason}
        )


@in_callers_transaction
def exclude_locked(
    *, actor: User | None, course: Course, r: PeerRound, group_id: int, after: dict[str, Any]
) -> int:
    """`exclude` on a round already locked by the caller (also the lifecycle reaction's path):
    records the exclusion, drops the group from the proposal or re-pairs a published round.
    Raises Conflict, changing nothing, when the rest cannot be re-paired."""
    reason = str(after.get("reason") or after.get("event") or "")
    PeerExclusion.objects.get_or_create(
        round=r, group_id=group_id, defaults={"reason": reason[:200]}
    )
    audit_record(
        actor=actor, action="peer.exclude", course=course, obj=r, after={"group": group_id, **after}
    )
    if not r.published_at:
        r.proposal = [x for x in r.proposal if group_id not in x]
        r.save(update_fields=["proposal"])
        return 0
    old = {(a.reviewer_id, a.reviewee_id): a for a in PeerAssignment.objects.filter(round=r)}
    result = pairing.repair(problem_for(r), old)
    if not result.ok:
        raise Conflict("Left out, but the rest cannot be re-paired: " + "; ".join(result.reasons))
    new = set(result.pairs)
    gone = [a.pk for pair_, a in old.items() if pair_ not in new]
    PeerAssignment.objects.filter(pk__in=gone).delete()
    PeerAssignment.objects.bulk_create(
        [PeerAssignment(round=r, reviewer_id=a, reviewee_id=b) for a, b in new if (a, b) not in old]
    )
    return len(gone)


# ------------------------------------------------------------------ reviews


def group_of(course: Course, user: User) -> Group | None:
    m = (
        GroupMembership.objects.filter(
            course=course, user=user, left_at__isnull=True, group__dissolved_at__isnull=True
        )
        .select_related("group")
        .first()
    )
    return m.group if m else None


def review_save(
    *,
    actor: User,
    course: Course,
    assignment_id: int,
    version: int,
    data: dict[str, Any],
    submit: bool = False,
    now: dt.datetime | None = None,
) -> PeerReview:
    """Any member of the reviewing group saves (or submits) the review until the due date. A save
    based on an older version than the stored one is refused (409), never silently merged."""
    now = now or timezone.now()
    group = group_of(course, actor)
    with transaction.atomic():
        a = (
            PeerAssignment.objects.select_related("round")
            .filter(round__course=course, pk=assignment_id, round__published_at__isnull=False)
            .filter(Q(reviewer=group) if group else Q(pk__in=[]))
            .first()
        )
        if a is None:
            raise NotFound("No such review for your group.")
        if now > a.round.due_at:
            raise Conflict("The review due date has passed; reviews can no longer change.")
        review, _ = PeerReview.objects.get_or_create(assignment=a)
        review = PeerReview.objects.select_for_update().get(pk=review.pk)
        if version != review.version:
            who = review.updated_by.get_full_name() if review.updated_by else "someone"
            raise Conflict(
                f"{who} saved this review at {review.updated_at:%H:%M} after you opened it; reload "
                "to see their changes, then save again."
            )
        for key, _label in CRITERIA:
            if key in data:
                value = data[key]
                if value in (None, ""):
                    setattr(review, key, None)
                    continue
                try:
                    score = int(value)
                except (TypeError, ValueError):
                    raise DomainError("Scores are whole numbers from 1 to 5.", field=key) from None
                if not 1 <= score <= 5:
                    raise DomainError("Scores are whole numbers from 1 to 5.", field=key)
                setattr(review, key, score)
        for key in ("strengths", "weaknesses", "suggestions", "recommendation"):
            if key in data:
                setattr(review, key, str(data[key] or "").strip())
        if data.get("ai_used") not in (None, ""):
            integrity.apply(review, data["ai_used"], data.get("ai_description", ""))
        if submit:
            if review.ai_used is None:
                integrity.check(None, "")  # names the unanswered question
            missing = [label for key, label in CRITERIA if getattr(review, key) is None]
            if missing:
                raise DomainError(
                    "Score every criterion before submitting: " + ", ".join(missing) + "."
                )
            short = [
                k
                for k in ("strengths", "weaknesses", "suggestions")
                if len(getattr(review, k)) < MIN_COMMENT
            ]
            if short:
                raise DomainError(
                    f"Write at least {MIN_COMMENT} characters for: " + ", ".join(short) + "."
                )
            if not review.recommendation:
                raise DomainError("Give an overall recommendation.", field="recommendation")
            review.status = PeerReview.Status.SUBMITTED
            review.submitted_at = review.submitted_at or now
        review.version += 1
        review.updated_by = actor
        review.save()
        audit_record(
            actor=actor,
            action="peer.review_submit" if submit else "peer.review_save",
            course=course,
            obj=review,
        )
    return review


def released(r: PeerRound, now: dt.datetime | None = None) -> bool:
    """Reviews reach the reviewed group only after the due date: checked here, on the server."""
    return r.published_at is not None and (now or timezone.now()) >= r.due_at


def peer_scores(r: PeerRound) -> dict[int, float]:
    """Per reviewed group: the mean over its submitted reviews of the mean criterion score (1–5),
    for the gradebook."""
    out: dict[int, list[float]] = {}
    for rev in PeerReview.objects.filter(
        assignment__round=r, status=PeerReview.Status.SUBMITTED
    ).select_related("assignment"):
        vals = [v for v in rev.scores().values() if v is not None]
        out.setdefault(rev.assignment.reviewee_id, []).append(sum(vals) / len(vals))
    return {g: sum(v) / len(v) for g, v in out.items()}
