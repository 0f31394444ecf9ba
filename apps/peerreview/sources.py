"""Peer reviews on the calendar: a student's group's review due date (reminded until the review is
submitted); staff see each published round's due date."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db.models import QuerySet

from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.core.compiled import compiled_query
from apps.core.models import Course
from apps.groups.models import GroupMembership
from apps.groups.selectors import current_group_id
from apps.peerreview.models import PeerAssignment, PeerReview, PeerRound


def _event(r: PeerRound, course: Course, who: str) -> Event:
    return Event(
        uid=uid("peer-review", r.pk, course.code),
        kind="duty",
        code="Peer review",
        title=f"{r.title} due",
        start=r.due_at,
        description=who,
        path=f"/c/{course.code}/peer-review/",
        reminder_kind="duty",
    )


def _assignments(course_id: int, group_id: int) -> QuerySet[PeerAssignment]:
    return (
        PeerAssignment.objects.filter(
            round__course_id=course_id, round__published_at__isnull=False, reviewer_id=group_id
        )
        .select_related("reviewee", "round")
        .order_by("pk")
    )


def review_events(query: EventQuery) -> Iterable[Event]:
    """One query either way: staff the published rounds, a student their group's assignments."""
    if query.staff:
        rounds = PeerRound.objects.filter(course=query.course, published_at__isnull=False)
        if query.start:
            rounds = rounds.filter(due_at__gte=query.start)
        if query.end:
            rounds = rounds.filter(due_at__lt=query.end)
        return [_event(r, query.course, "Every group's review is due") for r in rounds]
    gid = current_group_id(course=query.course, user=query.user, memo=query.memo)
    if gid is None:
        return []
    if query.start or query.end:
        mine = _assignments(query.course.pk, gid)
        if query.start:
            mine = mine.filter(round__due_at__gte=query.start)
        if query.end:
            mine = mine.filter(round__due_at__lt=query.end)
    else:  # the dashboard's deadlines, feeds: the hot shape
        mine = compiled_query("peerreview.assignments", _assignments, query.course.pk, gid)  # type: ignore[assignment]
    by_round: dict[int, list[str]] = {}
    found: dict[int, PeerRound] = {}
    for a in mine:
        by_round.setdefault(a.round_id, []).append(a.reviewee.name)
        found[a.round_id] = a.round
    return [
        _event(r, query.course, "Your group reviews " + ", ".join(by_round[r.pk]))
        for r in found.values()
    ]


def review_reminders(
    course: Course, start: dt.datetime, end: dt.datetime
) -> Iterable[tuple[int, Event]]:
    out: list[tuple[int, Event]] = []
    for r in PeerRound.objects.filter(
        course=course, published_at__isnull=False, due_at__gte=start, due_at__lt=end
    ):
        done = set(
            PeerReview.objects.filter(
                assignment__round=r, status=PeerReview.Status.SUBMITTED
            ).values_list("assignment__reviewer_id", flat=True)
        )
        pending = (
            set(PeerAssignment.objects.filter(round=r).values_list("reviewer_id", flat=True)) - done
        )
        event = _event(r, course, "Your group's review is not submitted yet")
        members = GroupMembership.objects.filter(group_id__in=pending, left_at__isnull=True)
        out.extend((user_id, event) for user_id in members.values_list("user_id", flat=True))
    return out
