"""Pages of quotas and schedules per group: staff's usage page (every group's GPU-hours against
its quota, each node's activity, opt-out requests to decide, a group's own quota) and a group's
own (its quota, the nightly shutdown, its opt-out requests and the form to ask)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from apps.compute.board.selectors import group_id_of
from apps.compute.models import Node
from apps.compute.usage import quotas, schedules, silence
from apps.compute.usage import rules as usage_rules
from apps.compute.usage.forms import DeclineForm, GroupQuotaForm, OptOutForm
from apps.compute.usage_models import AutoStop
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages

GROUPS_PER_PAGE = 25
STOPS_SHOWN = 10


def _shutdown_context(course: Course, policy: Any) -> dict[str, Any]:
    if policy.shutdown_at is None:
        return {"shutdown": None}
    now = timezone.now()
    _, moment = usage_rules.next_shutdown(now, policy.shutdown_at, course.tz)
    return {"shutdown": schedules.describe(course, policy), "next_shutdown": moment}


@login_required
@require_safe
def usage_page(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: GPU-hours per group this period against its quota, each held node's activity,
    opt-out requests (paginated), the last automatic stops, and a group's own quota."""
    course = course_for(request, code, staff=True)
    now = timezone.now()
    policy = quotas.policy_of(course)
    every = quotas.standings(course, now)
    page = Paginator(every, GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    node_ids = [s.node.pk for s in page if s.node is not None]
    below = silence.idle_below(course)
    nodes = {
        n.pk: silence.activity_of(n, below, now)
        for n in silence.with_last_sample(Node.objects.filter(pk__in=node_ids))
    }
    rows = [(s, nodes.get(s.node.pk) if s.node else None) for s in page]
    opt_outs = schedules.opt_out_page(
        schedules.opt_out_list(user=request.user, course=course), request.GET.get("opt_page")
    )
    return render(
        request,
        "compute/usage.html",
        {
            "course": course,
            "policy": policy,
            "rows": rows,
            "page": page,
            "opt_outs": opt_outs,
            "stops": AutoStop.objects.filter(course=course)
            .select_related("node", "group", "op")
            .order_by("-at")[:STOPS_SHOWN],
            "quota_form": GroupQuotaForm(groups=[(s.group_id, s.group) for s in every]),
            "decline_form": DeclineForm(),
            **_shutdown_context(course, policy),
        },
    )


@course_action(staff=True)
def group_quota(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff set one group's own GPU-hour quota (or give it back the course file's)."""
    groups = [(s.group_id, s.group) for s in quotas.standings(course)]
    form = GroupQuotaForm(request.POST, groups=groups)
    if not form.is_valid():
        for field, errs in form.errors.items():
            label = form.fields[field].label if field in form.fields else ""
            text = " ".join(str(e) for e in errs)
            messages.error(request, f"{label}: {text}" if label else text)
        return redirect("compute:usage", code=course.code)
    with errors_as_messages(request):
        quotas.group_quota_set(
            actor=request.user,
            course=course,
            group_id=form.cleaned_data["group"],
            gpu_hours=form.cleaned_data["gpu_hours"],
            note=form.cleaned_data["note"],
        )
        hours = form.cleaned_data["gpu_hours"]
        messages.success(
            request,
            "The group's quota is now "
            + (f"{hours} GPU-hours." if hours is not None else "the course file's again."),
        )
    return redirect("compute:usage", code=course.code)


@course_action(staff=True)
def opt_out_approve(request: AuthedRequest, course: Course, opt_out_id: int) -> HttpResponse:
    with errors_as_messages(request):
        o = schedules.opt_out_approve(actor=request.user, course=course, opt_out_id=opt_out_id)
        messages.success(request, f"Approved: {o.group.name} keeps its node on that night.")
    return redirect("compute:usage", code=course.code)


@course_action(staff=True)
def opt_out_decline(request: AuthedRequest, course: Course, opt_out_id: int) -> HttpResponse:
    form = DeclineForm(request.POST)
    if not form.is_valid():
        errs = form.errors.get("note") or ["Enter a reason."]
        messages.error(request, "Reason: " + " ".join(str(e) for e in errs))
        return redirect("compute:usage", code=course.code)
    with errors_as_messages(request):
        o = schedules.opt_out_decline(
            actor=request.user, course=course, opt_out_id=opt_out_id, note=form.cleaned_data["note"]
        )
        messages.success(request, f"Declined; {o.group.name} has been e-mailed the reason.")
    return redirect("compute:usage", code=course.code)


@login_required
def my_usage(request: AuthedRequest, code: str) -> HttpResponse:
    """A group's GPU-hours against its quota, the nightly shutdown, and its requests to keep
    the node running through a night (with the form to ask)."""
    course = course_for(request, code)
    policy = quotas.policy_of(course)
    group_id = group_id_of(user=request.user, course=course)
    standing = quotas.standing_of(course, group_id) if group_id else None
    shutdown = _shutdown_context(course, policy)
    form = OptOutForm(when=shutdown.get("shutdown") or "nightly")
    if request.method == "POST":
        form = OptOutForm(request.POST, when=shutdown.get("shutdown") or "nightly")
        if form.is_valid():
            try:
                o = schedules.opt_out_request(
                    actor=request.user,
                    course=course,
                    night=form.cleaned_data["night"],
                    reason=form.cleaned_data["reason"],
                )
            except DomainError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(
                    request,
                    f"Asked to keep your node running on the night of {o.night:%a %-d %b}: "
                    + (
                        "approved (the course's rule)."
                        if o.status == "approved"
                        else "the staff decide, and you hear by e-mail."
                    ),
                )
                return redirect("compute:my-usage", code=course.code)
    opt_outs = schedules.opt_out_page(
        schedules.opt_out_list(user=request.user, course=course), request.GET.get("page")
    )
    return render(
        request,
        "compute/my_usage.html",
        {
            "course": course,
            "policy": policy,
            "standing": standing,
            "group_id": group_id,
            "staff": is_staff(request.user, course),
            "form": form,
            "page": opt_outs,
            **shutdown,
        },
    )


def node_page_context(course: Course, group_id: int | None, node: Node | None) -> dict[str, Any]:
    """What the node page shows of quotas and activity: used / quota, and what the node is
    doing (`unknown` when it went silent). A fixed number of queries."""
    if group_id is None:
        return {}
    now = timezone.now()
    out: dict[str, Any] = {"quota": quotas.standing_of(course, group_id, now)}
    if node is not None:
        found = silence.with_last_sample(Node.objects.filter(pk=node.pk)).first()
        if found is not None:
            out["activity"] = silence.activity_of(found, silence.idle_below(course), now)
            out["last_sample_at"] = getattr(found, "last_sample_at", None)
    return out
