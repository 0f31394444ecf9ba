"""Contributions page. Students: propose a question (checked on five students' numbers before it
is saved), their proposals with the staff's comments, edits while waiting, the accepted questions
with their authors. Staff: the review queue with each key's sample values, accept / ask for
changes / reject, credits per student (CSV)."""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.calendar.models import Assignment
from apps.contributions import rules, selectors, services
from apps.contributions.models import QuestionProposal
from apps.core import integrity
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.views_helpers import (
    course_action,
    course_for,
    errors_as_messages,
    redirect_with_back_query,
)

PAGE = 20


def form_data(post: Any) -> dict[str, Any]:
    try:
        rel = float(post.get("rel_tol_percent", "2") or 2) / 100
    except ValueError:
        rel = -1.0
    return {
        "kind": post.get("kind", "numeric"),
        "prompt": post.get("prompt", ""),
        "params_text": post.get("params_text", ""),
        "answer": post.get("answer", ""),
        "unit": post.get("unit", ""),
        "rel_tol": rel,
        "options": rules.options_from_text(post.get("options_text", "")),
        "assignment": int(post["assignment"]) if post.get("assignment", "").isdigit() else None,
        "link": post.get("link", ""),
        "ai_used": post.get("ai_used"),
        "ai_description": post.get("ai_description", ""),
    }


def _samples(p: QuestionProposal) -> list[dict[str, Any]]:
    _, samples, _ = rules.check(
        kind=p.kind,
        prompt=p.prompt,
        params_text=p.params_text,
        answer=p.answer,
        rel_tol=p.rel_tol,
        options=p.options,
    )
    return samples


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Students: propose questions and see theirs; staff: the review queue (CSV of credits with
    ?format=csv). Every change posts to its own action view below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _staff_page(request, course)
    return _student_page(request, course, {})


def _student_page(
    request: AuthedRequest, course: Course, extra: dict[str, Any]
) -> HttpResponseBase:
    """The student page; `extra` carries a draft being checked or refused, with its problems."""
    proposals = selectors.proposal_list(user=request.user, course=course)
    mine = proposals.filter(authors=request.user).prefetch_related("authors")
    accepted = Paginator(
        proposals.filter(status="accepted")
        .prefetch_related("authors")
        .order_by("-created_at", "-pk"),
        PAGE,
    ).get_page(request.GET.get("page"))
    ctx = {
        "course": course,
        "staff": False,
        "mine": mine,
        "accepted": accepted,
        "assignments": Assignment.objects.filter(course=course).order_by("due_at"),
        **extra,
    }
    return render(request, "contributions/student.html", ctx)


def _staff_page(request: AuthedRequest, course: Course) -> HttpResponseBase:
    proposals = selectors.proposal_list(user=request.user, course=course)
    if request.GET.get("format") == "proposals":
        return csv_response(
            f"{course.code}-proposals.csv",
            itertools.chain(
                [["id", "status", "kind", "authors", "prompt", *integrity.EXPORT_HEADER]],
                (
                    [
                        p.pk,
                        p.status,
                        p.kind,
                        "; ".join(a.email for a in p.authors.all()),
                        p.prompt,
                        *integrity.export_cells(p),
                    ]
                    for p in proposals.prefetch_related("authors").order_by("pk")
                ),
            ),
        )
    if request.GET.get("format") == "csv":
        credits = selectors.accepted_per_student(course)
        people = User.objects.filter(pk__in=credits).order_by("full_name", "email")
        return csv_response(
            f"{course.code}-contributions.csv",
            itertools.chain(
                [["email", "name", "accepted contributions (questions and reframings)"]],
                ([u.email, u.full_name, credits[u.pk]] for u in people),
            ),
        )
    status = request.GET.get("status", "proposed")
    shown = proposals.filter(status=status) if status else proposals
    page_ = Paginator(shown.prefetch_related("authors"), PAGE).get_page(request.GET.get("page"))
    ctx = {
        "course": course,
        "staff": True,
        "page": page_,
        "status": status,
        "rows": [(p, _samples(p) if p.status == "proposed" else []) for p in page_],
        "counts": {
            s: proposals.filter(status=s).count()
            for s in ("proposed", "changes", "accepted", "rejected")
        },
    }
    return render(request, "contributions/staff.html", ctx)


@course_action(student=True)
def proposal_check(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A student checks a draft without saving it: the problems, or the key on five students'
    numbers."""
    data = form_data(request.POST)
    _, samples, problems = rules.check(
        kind=data["kind"],
        prompt=data["prompt"],
        params_text=data["params_text"],
        answer=data["answer"],
        rel_tol=data["rel_tol"],
        options=data["options"],
        link=data["link"],
    )
    extra = {"draft": request.POST, "samples": samples, "problems": problems}
    return _student_page(request, course, extra)


def _refused_draft(request: AuthedRequest, course: Course, exc: DomainError) -> HttpResponseBase:
    messages.error(request, exc.message)
    problems = exc.problems if isinstance(exc, services.ProposalProblems) else {}
    return _student_page(request, course, {"draft": request.POST, "problems": problems})


@course_action(student=True)
def proposal_submit(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A student (or their whole group) proposes a question for the staff to review."""
    try:
        p = services.proposal_submit(
            actor=request.user,
            course=course,
            data=form_data(request.POST),
            as_group=request.POST.get("as_group") == "on",
        )
    except DomainError as exc:
        return _refused_draft(request, course, exc)
    messages.success(request, f"Proposal #{p.pk} sent to the staff.")
    return redirect("contributions:page", code=course.code)


@course_action(student=True)
def proposal_edit(request: AuthedRequest, course: Course, proposal_id: int) -> HttpResponseBase:
    """An author edits a proposal that waits for review or was sent back."""
    try:
        services.proposal_update(
            actor=request.user,
            course=course,
            proposal_id=proposal_id,
            data=form_data(request.POST),
        )
    except DomainError as exc:
        return _refused_draft(request, course, exc)
    messages.success(request, "Saved; it waits for review again.")
    return redirect("contributions:page", code=course.code)


@course_action(staff=True)
def proposal_review(request: AuthedRequest, course: Course, proposal_id: int) -> HttpResponseBase:
    """Staff accept a proposal into the bank, send it back with a comment, or reject it."""
    with errors_as_messages(request):
        p = services.proposal_review(
            actor=request.user,
            course=course,
            proposal_id=proposal_id,
            decision=request.POST.get("decision", ""),
            comment=request.POST.get("comment", ""),
        )
        messages.success(request, f"Proposal #{p.pk}: {p.get_status_display().lower()}.")
    here = reverse("contributions:page", kwargs={"code": course.code})
    return redirect_with_back_query(request, here)
