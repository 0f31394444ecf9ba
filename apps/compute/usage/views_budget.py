"""Staff pages of what the course spends: the budget with its burn-down and GPU-hours per group,
and the node agent that sends the GPU samples (how to install it, its token)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from apps.compute.cloud.providers import is_live
from apps.compute.models import Node
from apps.compute.usage import metering
from apps.compute.usage.agent_tokens import agent_token_issue
from apps.core.csvexport import csv_response
from apps.core.errors import NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.views_helpers import course_action, course_for

AGENT = Path(__file__).resolve().parent / "agent" / "courseops_agent.py"


def _node(course: Course, node_id: int) -> Node:
    node = Node.objects.filter(course=course, pk=node_id).first()
    if node is None:
        raise Http404("No such node in this course.")
    return node


@login_required
@require_safe
def budget_page(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: credits spent, the burn-down and its projection, GPU-hours per group."""
    course = course_for(request, code, staff=True)
    b = metering.budget(course)
    return render(
        request,
        "compute/budget.html",
        {
            "course": course,
            "b": b,
            "chart": mark_safe(metering.burndown_svg(b, course.timezone)),
            "chart_end": metering.chart_end(b),
            "beyond": metering.runs_out_beyond_chart(b),
            "pct": round(b.pct, 1),
            "live": is_live(),
        },
    )


@login_required
@require_safe
def budget_export(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    b = metering.budget(course)
    rows = [[g.group, f"{g.gpu_hours:.1f}", f"{g.node_hours:.2f}", str(g.cost)] for g in b.groups]
    header = ["group", "gpu_hours", "node_hours", "cost_usd"]
    return csv_response(f"{course.code}-gpu-hours.csv", [header, *rows])


@login_required
@require_safe
def agent_page(request: AuthedRequest, code: str, node_id: int) -> HttpResponse:
    """Staff: the node agent — how to install it, and a new token (shown once)."""
    course = course_for(request, code, staff=True)
    node = _node(course, node_id)
    recent = node.gpu_samples.order_by("-at")[:12]
    return render(
        request,
        "compute/agent.html",
        {"course": course, "node": node, "recent": recent, "token": None},
    )


@course_action(staff=True)
def agent_token(request: AuthedRequest, course: Course, node_id: int) -> HttpResponse:
    """Staff: a new agent token for the node (the old one stops working); shown once."""
    try:
        node, token = agent_token_issue(actor=request.user, course=course, node_id=node_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    recent = node.gpu_samples.order_by("-at")[:12]
    return render(
        request,
        "compute/agent.html",
        {"course": course, "node": node, "recent": recent, "token": token},
    )


@login_required
@require_safe
def agent_file(request: AuthedRequest, code: str) -> HttpResponse:
    course_for(request, code, staff=True)
    response = HttpResponse(AGENT.read_text(), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="courseops_agent.py"'
    return response
