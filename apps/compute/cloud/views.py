"""The cloud behind the board: what differs, the jobs and their calls, the inventory plan and
power. Staff pages; power also for the holding group when the course file allows it. (The budget
and the node agent are usage's: `usage/views_budget.py`.)"""

from __future__ import annotations

import datetime as dt
import itertools

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from apps.compute.cloud import inventory, nodeops
from apps.compute.cloud import sync as cloud
from apps.compute.cloud.forms import NodeStopForm
from apps.compute.cloud.providers import is_live, provider_name
from apps.compute.cloud.providers.base import CloudError
from apps.compute.localssd import describe
from apps.compute.models import CloudOp, ComputePolicy, Node
from apps.core.csvexport import csv_response
from apps.core.errors import Conflict, DomainError, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant
from apps.core.views_helpers import course_action, course_for, errors_as_messages

PAGE = 25


@login_required
@require_safe
def cloud_page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Staff: the provider, where the cloud differs from the board, and every cloud job;
    `?format=csv` is the jobs of the filter as a spreadsheet, without asking the cloud."""
    course = course_for(request, code, staff=True)
    status = request.GET.get("status", "")
    ops = CloudOp.objects.filter(course=course).select_related("node", "requested_by")
    if status in CloudOp.Status.values:
        ops = ops.filter(status=status)
    if request.GET.get("format") == "csv":
        return _jobs_csv(course, status, ops)
    problem, drift = "", []
    try:
        drift = cloud.drift(course)
    except CloudError as exc:
        problem = exc.reason
    page = Paginator(ops.order_by("-created_at"), PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "compute/cloud.html",
        {
            "course": course,
            "provider": provider_name(),
            "live": is_live(),
            "drift": drift,
            "problem": problem,
            "page": page,
            "status": status,
            "statuses": CloudOp.Status.choices,
            "nodes": Node.objects.filter(course=course).order_by("name"),
        },
    )


def _jobs_csv(course: Course, status: str, ops: QuerySet[CloudOp]) -> HttpResponseBase:
    """Every cloud job of the filter, newest first, times in course time with the zone named."""
    when = course.timezone
    header = ["job", "asked", "what", "node", "status", "tries", "why it failed", "asked by"]
    header += ["why", "finished", "provider"]
    lines = (
        [
            op.pk,
            format_instant(op.created_at, when),
            op.get_kind_display(),
            op.node.name if op.node else "",
            op.get_status_display(),
            op.attempts,
            op.reason,
            op.requested_by.email if op.requested_by else "",
            op.why,
            format_instant(op.finished_at, when) if op.finished_at else "",
            op.provider,
        ]
        for op in ops.order_by("-created_at", "-pk").iterator(chunk_size=500)
    )
    name = f"{course.code}-cloud-jobs-{status if status in CloudOp.Status.values else 'all'}.csv"
    return csv_response(name, itertools.chain([header], lines))


@login_required
@require_safe
def cloud_job(request: AuthedRequest, code: str, op_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    op = CloudOp.objects.filter(course=course, pk=op_id).select_related("node").first()
    if op is None:
        raise Http404("No such cloud job in this course.")
    calls = [
        {**c, "at": dt.datetime.fromisoformat(c["at"]) if c.get("at") else None} for c in op.calls
    ]
    return render(request, "compute/cloud_job.html", {"course": course, "op": op, "calls": calls})


@course_action(staff=True)
def cloud_job_retry(request: AuthedRequest, course: Course, op_id: int) -> HttpResponse:
    """Staff: try a failed job's thing again (a new job, so the history stays)."""
    op = CloudOp.objects.filter(course=course, pk=op_id).first()
    if op is None:
        raise Http404("No such cloud job in this course.")
    new = cloud.request(
        course.pk, op.kind, op.node_id, why=f"retry of #{op.pk} by staff", actor_id=request.user.pk
    )
    messages.success(request, f"Queued job #{new.pk}; this page shows how it went.")
    return redirect("compute:cloud-job", code=course.code, op_id=new.pk)


@course_action(staff=True)
def cloud_reconcile(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff: read the cloud now and queue a job for whatever differs from the board."""
    try:
        changed, drift = cloud.reconcile(course)
    except CloudError as exc:
        messages.error(request, f"The cloud did not answer: {exc.reason}. Nothing was changed.")
        return redirect("compute:cloud", code=course.code)
    if drift:
        messages.info(request, f"{len(drift)} difference(s) found; jobs are queued below.")
    else:
        messages.success(request, "The cloud matches the board.")
    if changed:
        messages.info(request, f"{changed} node status(es) changed.")
    return redirect("compute:cloud", code=course.code)


@login_required
@require_safe
def cloud_sync(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: what the project holds that the board does not, and the reverse."""
    course = course_for(request, code, staff=True)
    plan, problem = None, ""
    try:
        plan = inventory.plan(course)
    except CloudError as exc:
        problem = exc.reason
    return render(
        request,
        "compute/cloud_sync.html",
        {"course": course, "plan": plan, "problem": problem, "provider": provider_name()},
    )


@course_action(staff=True)
def cloud_sync_apply(request: AuthedRequest, course: Course) -> HttpResponse:
    with errors_as_messages(request):
        try:
            done = inventory.apply(
                actor=request.user, course=course, digest=request.POST.get("digest", "")
            )
        except CloudError as exc:
            raise Conflict(f"The cloud did not answer: {exc.reason}. Nothing was changed.") from exc
        messages.success(request, f"Applied {len(done.changes)} change(s) to the board.")
        return redirect("compute:board", code=course.code)
    return redirect("compute:cloud-sync", code=course.code)


@login_required
@require_safe
def node_power_confirm(request: AuthedRequest, code: str, node_id: int) -> HttpResponse:
    """The page that asks before a node is started or stopped."""
    course = course_for(request, code)
    try:
        node = nodeops.node_of(request.user, course, node_id, power=True)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    return _power_page(request, course, node, None)


def _power_page(
    request: AuthedRequest, course: Course, node: Node, form: NodeStopForm | None
) -> HttpResponse:
    gb = node.local_ssd_gb
    form = form or NodeStopForm(may_discard=is_staff(request.user, course), gb=gb)
    policy = ComputePolicy.objects.filter(course=course).first()
    return render(
        request,
        "compute/power.html",
        {
            "course": course,
            "node": node,
            "policy": policy,
            "provider": provider_name(),
            "form": form,
            "ssd": describe(gb) if gb else "",
        },
        status=400 if form.is_bound else 200,
    )


def _power(
    request: AuthedRequest, course: Course, node_id: int, kind: str, discard: bool = False
) -> HttpResponse:
    try:
        op = nodeops.power_request(
            actor=request.user,
            course=course,
            node_id=node_id,
            kind=kind,
            discard_local_ssd=discard,
        )
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except DomainError as exc:  # a group over its GPU-hour quota may not start its node
        messages.error(request, exc.message, extra_tags=f"refused-{exc.code}")
        return redirect("compute:mine", code=course.code)
    name = op.node.name if op.node else "the node"
    messages.success(
        request,
        f"{'Starting' if kind == CloudOp.Kind.START else 'Stopping'} {name} (job #{op.pk}); "
        "its status updates within a couple of minutes.",
    )
    if is_staff(request.user, course):
        return redirect("compute:cloud", code=course.code)
    return redirect("compute:mine", code=course.code)


@course_action()
def node_start(request: AuthedRequest, course: Course, node_id: int) -> HttpResponse:
    """Start the node (staff, or the holding group when the course file allows it)."""
    return _power(request, course, node_id, CloudOp.Kind.START)


@course_action()
def node_stop(request: AuthedRequest, course: Course, node_id: int) -> HttpResponse:
    """Stop the node: whatever runs on it ends; its disk, address and keys stay, and so does
    its Local SSD data unless staff chose (and confirmed) to discard it."""
    try:
        node = nodeops.node_of(request.user, course, node_id, power=True)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    form = NodeStopForm(
        request.POST, may_discard=is_staff(request.user, course), gb=node.local_ssd_gb
    )
    if not form.is_valid():
        return _power_page(request, course, node, form)
    return _power(request, course, node_id, CloudOp.Kind.STOP, discard=form.discard)
