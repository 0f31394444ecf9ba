"""Today items: a student's deadlines this week with their slack; staff's late work to decide."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.slackdays.models import LateWork
from apps.slackdays.selectors import student_slack_memo

WEEK = dt.timedelta(days=7)
DAY = dt.timedelta(days=1)


def deadlines(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    memo = request.__dict__.setdefault("_memo", {})  # shared with the dashboard's panels
    balance, rows = student_slack_memo(memo, course=course, student=request.user)  # type: ignore[arg-type]
    url = reverse("slackdays:mine", kwargs={"code": course.code})
    out = []
    ahead = [d for d in rows if d.effective >= now]
    # This week's deadlines; when none falls in it, still the next one (a week and a day away
    # is worth seeing on Today too).
    shown = [d for d in ahead if d.effective <= now + WEEK] or sorted(
        ahead, key=lambda d: d.effective
    )[:1]
    for d in shown:
        spent = f"{d.slack_days} slack day(s) spent on it; " if d.slack_days else ""
        more = " — one more would move it a day" if d.can_apply else ""
        out.append(
            TodayItem(
                kind="deadline",
                title=f"{d.assignment.code} {d.assignment.title}",
                url=url,
                when=d.effective,
                detail=f"{spent}{balance} slack day(s) left{more}",
                urgent=d.effective - now < DAY,
                subject=f"assignment:{d.assignment.code}",
            )
        )
    return out


def late_work(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    n = LateWork.objects.filter(course=course, status=LateWork.Status.OPEN).count()
    if not n:
        return []
    return [
        TodayItem(
            kind="decide",
            title=f"{n} late submission(s) slack could not cover",
            url=reverse("slackdays:staff", kwargs={"code": course.code}) + "#late-work",
            detail="Grant an exception or leave as late.",
            urgent=True,
        )
    ]
