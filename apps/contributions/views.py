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

from apps.contributions import rules, selectors, services
from apps.contributions.models import QuestionProposal
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import User
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_for
from apps.core.views_helpers import int_or_none as _int

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
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    staff = is_staff(request.user, course)
    ctx: dict[str, Any] = {"course": course, "staff": staff}
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if staff and action == "review":
                p = services.proposal_review(
                    actor=request.user,
                    course=course,
                    proposal_id=_int(request.POST.get("proposal")) or 0,
                    decision=request.POST.get("decision", ""),
                    comment=request.POST.get("comment", ""),
                )
                messages.success(request, f"Proposal #{p.pk}: {p.get_status_display().lower()}.")
                return redirect(request.get_full_path())
            if not staff and action in ("check", "propose", "edit"):
                data = form_data(request.POST)
                ctx["draft"] = request.POST
                if action == "check":
                    _, samples, problems = rules.check(
                        kind=data["kind"],
                        prompt=data["prompt"],
                        params_text=data["params_text"],
                        answer=data["answer"],
                        rel_tol=data["rel_tol"],
                        options=data["options"],
                    )
                    ctx |= {"samples": samples, "problems": problems}
                elif action == "edit":
                    services.proposal_update(
                        actor=request.user,
                        course=course,
                        proposal_id=_int(request.POST.get("proposal")) or 0,
                        data=data,
                    )
                    messages.success(request, "Saved; it waits for review again.")
                    return redirect("contributions:page", code=course.code)
                else:
                    p = services.proposal_submit(
                        actor=request.user,
                        course=course,
                        data=data,
                        as_group=request.POST.get("as_group") == "on",
                    )
                    messages.success(request, f"Proposal #{p.pk} sent to the staff.")
                    return redirect("contributions:page", code=course.code)
            elif action not in ("check", "propose", "edit", "review"):
                messages.error(request, "Say what to do.")
        except services.ProposalProblems as exc:
            ctx["problems"] = exc.problems
            messages.error(request, exc.message)
        except DomainError as exc:
            messages.error(request, exc.message)
    proposals = selectors.proposal_list(user=request.user, course=course)
    if staff:
        if request.GET.get("format") == "csv":
            credits = selectors.accepted_per_student(course)
            people = User.objects.filter(pk__in=credits).order_by("full_name", "email")
            return csv_response(
                f"{course.code}-contributions.csv",
                itertools.chain(
                    [["email", "name", "accepted questions"]],
                    ([u.email, u.full_name, credits[u.pk]] for u in people),
                ),
            )
        status = request.GET.get("status", "proposed")
        shown = proposals.filter(status=status) if status else proposals
        page_ = Paginator(shown.prefetch_related("authors"), PAGE).get_page(request.GET.get("page"))
        ctx |= {
            "page": page_,
            "status": status,
            "rows": [(p, _samples(p) if p.status == "proposed" else []) for p in page_],
            "counts": {
                s: proposals.filter(status=s).count()
                for s in ("proposed", "changes", "accepted", "rejected")
            },
        }
        return render(request, "contributions/staff.html", ctx)
    mine = [p for p in proposals.prefetch_related("authors") if request.user in p.authors.all()]
    accepted = list(proposals.filter(status="accepted").prefetch_related("authors"))[:100]
    ctx |= {"mine": mine, "accepted": accepted}
    return render(request, "contributions/student.html", ctx)
