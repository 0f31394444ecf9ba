"""Today items: a student's scribe lectures coming up and notes due; staff's notes to review."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.scribing.models import ScribeDuty
from apps.scribing.sources import duties_of

SOON = dt.timedelta(days=14)  # a scribe duty is worth knowing two weeks ahead
DAY = dt.timedelta(days=1)


def duties(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    url = reverse("scribing:page", kwargs={"code": course.code})
    out = []
    memo = request.__dict__.setdefault("_memo", {})  # shared with the dashboard's deadlines
    for d in duties_of(course.pk, request.user.pk, memo):  # type: ignore[arg-type]
        if d.status not in (ScribeDuty.Status.ASSIGNED, ScribeDuty.Status.REVISION):
            continue
        lec = d.lecture
        if d.status == ScribeDuty.Status.REVISION:
            out.append(
                TodayItem(
                    kind="duty",
                    title=f"Revise your notes for L{lec.number}",
                    url=url,
                    detail=d.feedback[:200] or "Staff asked for a revision.",
                    urgent=True,
                )
            )
        elif now < lec.starts_at <= now + SOON:
            out.append(
                TodayItem(
                    kind="duty",
                    title=f"Scribe L{lec.number}: {lec.title}",
                    url=url,
                    when=lec.starts_at,
                    detail="Your notes are due a week after the lecture.",
                    urgent=lec.starts_at - now < DAY,
                )
            )
        elif lec.starts_at <= now:
            overdue = d.due_at < now
            out.append(
                TodayItem(
                    kind="duty",
                    title=f"Notes for L{lec.number}: {lec.title}",
                    url=url,
                    when=d.due_at,
                    detail="Overdue: submit the link as soon as you can."
                    if overdue
                    else "Submit the link to your notes and the sources you used.",
                    urgent=overdue or d.due_at - now < DAY,
                )
            )
    return out


def to_review(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    n = ScribeDuty.objects.filter(course=course, status=ScribeDuty.Status.SUBMITTED).count()
    if not n:
        return []
    return [
        TodayItem(
            kind="review",
            title=f"{n} set(s) of scribe notes to review",
            url=reverse("scribing:page", kwargs={"code": course.code}),
        )
    ]
