"""Regrade requests on the pages: a student asks from a released question set; staff work the
queue oldest first (answer, key, rubric, reason beside the decision form)."""

from __future__ import annotations

import itertools
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.autograder import regrades, rules
from apps.autograder.models import Question, QuestionSet, RegradeRequest
from apps.autograder.selectors import visible_grades_of
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.timefmt import format_instant
from apps.core.views_helpers import course_action, course_for, errors_as_messages, int_or_none

STATUSES = {"open", "rescored", "declined", ""}


@course_action(student=True)
def regrade_ask(request: AuthedRequest, course: Course, key: str) -> HttpResponseBase:
    qs = QuestionSet.objects.filter(course=course, key=key).first()
    with errors_as_messages(request):
        if qs is None:
            raise NotFound("No such question set.")
        regrades.require_open(qs)
        q = Question.objects.filter(question_set=qs, key=request.POST.get("question", "")).first()
        if q is None:
            raise NotFound("No such question in this set.", field="question")
        part = int_or_none(request.POST.get("part"))
        regrades.request_create(
            actor=request.user,
            question=q,
            reason=request.POST.get("reason", ""),
            part=part - 1 if part else None,
        )
        messages.success(request, f"Regrade request on {q.key} sent; you will get an e-mail.")
    return redirect("autograder:set", code=course.code, key=key)


@login_required
@require_GET
def queue_page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Staff's queue, oldest first, by status and question set; `?format=csv` is the same
    filter as a spreadsheet. A page costs the same queries for 5 requests as for 500."""
    course = course_for(request, code, staff=True)
    status = request.GET.get("status", "open")
    if status not in STATUSES:
        status = "open"
    sets = list(  # the sets anyone asked about, for the filter
        QuestionSet.objects.filter(course=course, questions__regrades__isnull=False)
        .distinct()
        .order_by("title")
    )
    chosen = next((qs for qs in sets if qs.key == request.GET.get("set")), None)
    rows_qs = regrades.queue(course, status=status)
    if chosen is not None:
        rows_qs = rows_qs.filter(question__question_set=chosen)
    if request.GET.get("format") == "csv":
        return _queue_csv(course, status, chosen, rows_qs)
    page = Paginator(rows_qs, 25).get_page(request.GET.get("page"))
    grades = visible_grades_of([(r.question, r.student_id) for r in page])
    rows = []
    for r in page:
        q = r.question
        grade = grades.get((q.pk, r.student_id))
        rows.append(
            {
                "r": r,
                "parts": (grade.detail.get("parts", []) if grade else []),
                "chosen": grade.detail.get("chosen") if grade else None,
                "correct": grade.detail.get("correct") if grade else None,
                "rubric": rules.rubric_text(q.rubric, q.rubric_spec),
            }
        )
    return render(
        request,
        "autograder/regrades.html",
        {
            "course": course,
            "rows": rows,
            "page": page,
            "status": status,
            "sets": sets,
            "chosen": chosen,
            "query": urlencode({"status": status, **({"set": chosen.key} if chosen else {})}),
        },
    )


def _queue_csv(
    course: Course, status: str, chosen: QuestionSet | None, rows: QuerySet[RegradeRequest]
) -> HttpResponseBase:
    """The filtered queue, oldest first, times in course time with the zone named."""
    when = course.timezone
    lines = (
        [
            format_instant(r.created_at, when),
            r.question.question_set.title,
            r.question.key,
            "" if r.part is None else r.part + 1,
            r.student.email,
            r.student.get_full_name(),
            r.reason,
            r.get_status_display(),
            f"{r.old_points:g}",
            "" if r.new_points is None else f"{r.new_points:g}",
            f"{r.question.points:g}",
            r.decided_by.email if r.decided_by else "",
            format_instant(r.decided_at, when) if r.decided_at else "",
            r.comment,
        ]
        for r in rows.iterator(chunk_size=500)
    )
    header = ["asked", "question set", "question", "part", "email", "name", "reason", "status"]
    header += ["points before", "points after", "out of", "decided by", "decided"]
    header += ["comment to the student"]
    name = f"{course.code}-regrades-{chosen.key + '-' if chosen else ''}{status or 'all'}.csv"
    return csv_response(name, itertools.chain([header], lines))


def _decide(
    request: AuthedRequest, course: Course, request_id: int, *, rescore: bool
) -> HttpResponseBase:
    with errors_as_messages(request):
        points = None
        if rescore:
            raw = request.POST.get("points", "").strip()
            try:
                points = float(raw)
            except ValueError:
                raise DomainError(f"{raw!r} is not a number of points.", field="points") from None
        r = regrades.decide(
            actor=request.user,
            course=course,
            request_id=request_id,
            points=points,
            comment=request.POST.get("comment", ""),
        )
        messages.success(request, f"{r.student}: {r.get_status_display().lower()}; e-mailed.")
    return redirect("autograder:regrades", code=course.code)


@course_action(staff=True)
def regrade_rescore(request: AuthedRequest, course: Course, request_id: int) -> HttpResponseBase:
    return _decide(request, course, request_id, rescore=True)


@course_action(staff=True)
def regrade_decline(request: AuthedRequest, course: Course, request_id: int) -> HttpResponseBase:
    return _decide(request, course, request_id, rescore=False)


def mine(qs: QuestionSet, user: User) -> dict[int, list[RegradeRequest]]:
    """A student's requests on a set, by question id (for the set page)."""
    out: dict[int, list[RegradeRequest]] = {}
    for r in RegradeRequest.objects.filter(question__question_set=qs, student=user).order_by(
        "created_at"
    ):
        out.setdefault(r.question_id, []).append(r)
    return out
