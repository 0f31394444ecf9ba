"""Today items: the reviews a student's group still has to submit in open rounds."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.groups.selectors import current_group_id
from apps.peerreview.models import PeerAssignment, PeerReview


def to_write(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    memo = request.__dict__.setdefault("_memo", {})  # shared with the dashboard's panels
    group_id = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if group_id is None:
        return []
    url = reverse("peerreview:page", kwargs={"code": course.code})
    return [
        TodayItem(
            kind="review",
            title=f"Review {a.reviewee.name}'s {a.round.milestone.name}",
            url=f"{url}#review-{a.pk}",
            when=a.round.due_at,
            detail="One review per group: save a draft, any member submits it.",
            urgent=a.round.due_at - now < dt.timedelta(days=1),
        )
        for a in compiled_query("peerreview.today.to_write", _to_write, group_id, now)
    ]


def _to_write(group_id: int, now: dt.datetime) -> QuerySet[PeerAssignment]:
    return (
        PeerAssignment.objects.filter(
            reviewer_id=group_id, round__published_at__isnull=False, round__due_at__gt=now
        )
        .exclude(review__status=PeerReview.Status.SUBMITTED)
        .select_related("round__milestone", "reviewee")
    )
