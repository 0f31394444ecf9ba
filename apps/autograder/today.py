"""Today items: a student's regrade requests answered this week and question sets whose
deadline is this week with questions still unanswered; staff's regrade queue."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.autograder.models import QuestionSet, RegradeRequest
from apps.autograder.setstate import answered_per_set
from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.core.versions import cached, course_version

WEEK = dt.timedelta(days=7)


def _decided(course_id: int, user_id: int, since: dt.datetime) -> QuerySet[Any]:
    return RegradeRequest.objects.filter(
        question__question_set__course_id=course_id, student_id=user_id, decided_at__gte=since
    ).select_related("question__question_set")


def _unreleased_sets(course: Course) -> list[Any]:
    """The course's unreleased question sets with an assignment, with their question counts
    (`n`): cached under the course's version, which a save of a set, a question or a calendar
    row (the assignment's deadline) drops."""
    return cached(
        course_version(course.pk),
        "unreleased-question-sets",
        lambda: list(
            QuestionSet.objects.filter(
                course=course, released_at__isnull=True, assignment__isnull=False
            )
            .annotate(n=Count("questions"))
            .select_related("assignment")
            .order_by("assignment__due_at", "pk")
        ),
        course,
    )


def for_student(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    out = []
    user_id = request.user.pk
    for r in compiled_query("autograder.today.decided", _decided, course.pk, user_id, now - WEEK):
        qs = r.question.question_set
        verdict = (
            f"re-scored {r.old_points:g} → {r.new_points:g}"
            if r.status == RegradeRequest.Status.RESCORED
            else "declined"
        )
        out.append(
            TodayItem(
                kind="regrade",
                title=f"Regrade of {qs.title} {r.question.key}: {verdict}",
                url=reverse("autograder:set", kwargs={"code": course.code, "key": qs.key}),
                when=r.decided_at,
                detail=r.comment[:200],
            )
        )
    due = [qs for qs in _unreleased_sets(course) if now < qs.assignment.due_at <= now + WEEK]
    if not due:  # most weeks: no set is due, and what was answered does not matter
        return out
    answered = dict(
        compiled_query("autograder.sets.answered", answered_per_set, course.pk, user_id)
    )
    for qs in due:
        left = qs.n - answered.get(qs.pk, 0)
        if left > 0:
            out.append(
                TodayItem(
                    kind="questions",
                    title=f"{qs.title}: {left} of {qs.n} unanswered",
                    url=reverse("autograder:set", kwargs={"code": course.code, "key": qs.key}),
                    when=qs.assignment.due_at if qs.assignment else None,
                    detail="Answers close at your deadline for the assignment.",
                    subject=f"assignment:{qs.assignment.code}" if qs.assignment else "",
                )
            )
    return out


def for_staff(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    n = RegradeRequest.objects.filter(
        Q(question__question_set__course=course), status=RegradeRequest.Status.OPEN
    ).count()
    if not n:
        return []
    return [
        TodayItem(
            kind="decide",
            title=f"{n} regrade request(s) waiting",
            url=reverse("autograder:regrades", kwargs={"code": course.code}),
            urgent=True,
        )
    ]
