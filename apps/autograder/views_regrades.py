"""Regrade requests on the pages: a student asks from a released question set; staff work the
queue oldest first (answer, key, rubric, reason beside the decision form)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.autograder import regrades, rules
from apps.autograder.models import Question, QuestionSet, RegradeRequest
from apps.autograder.selectors import released_run, visible_grades
from apps.core.errors import DomainError, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.views_helpers import course_action, course_for, errors_as_messages, int_or_none


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
def queue_page(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    status = request.GET.get("status", "open")
    if status not in {"open", "rescored", "declined", ""}:
        status = "open"
    page = Paginator(regrades.queue(course, status=status), 25).get_page(request.GET.get("page"))
    rows = []
    for r in page:
        q = r.question
        run = released_run(q.question_set)
        grade = visible_grades(run).filter(question=q, student=r.student).first()
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
        {"course": course, "rows": rows, "page": page, "status": status},
    )


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
