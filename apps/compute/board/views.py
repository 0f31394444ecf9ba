from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from apps.compute.board import access, formation, services, windows
from apps.compute.board.forms import WindowRequestForm
from apps.compute.board.hooks import node_page_context
from apps.compute.board.logins import login_names
from apps.compute.board.runs import window_needs_record
from apps.compute.board.selectors import (
    group_id_of,
    incident_list,
    own_node_bundle,
    window_bundle,
    window_list,
)
from apps.compute.board.timeline import timeline_svg
from apps.compute.models import Allocation, ComputePolicy, Node, NodeMove, SharingWindow
from apps.core.compiled import compiled_query
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages
from apps.groups.models import Group, GroupMembership

INCIDENTS_PER_PAGE = 25  # a term's reports grow with the course; the newest first

FILES = {
    "hosts": ("hosts", "text/plain", access.hosts_block),
    "ssh": ("ssh_config", "text/plain", access.ssh_config),
    "launch": ("launch.sh", "text/x-shellscript", access.launch_script),
    "firewall": ("firewall.sh", "text/x-shellscript", access.firewall_command),
}


def _download(
    bundle: access.Bundle, kind: str, login: str = "", logins: dict[str, str] | None = None
) -> HttpResponse:
    if kind not in FILES:
        raise Http404("No such file.")
    name, mime, render_file = FILES[kind]
    if kind == "ssh" and (login or logins):
        text = access.ssh_config(bundle, user=login or "YOUR_USERNAME", users=logins)
    else:
        text = render_file(bundle)
    response = HttpResponse(text, content_type=f"{mime}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{bundle.slug}-{name}"'
    return response


def _membership_with_group(course_id: int, user_id: int) -> QuerySet[GroupMembership]:
    return (
        GroupMembership.objects.filter(course_id=course_id, user_id=user_id, left_at__isnull=True)
        .select_related("group")
        .order_by("pk")[:1]
    )


def _active_allocations(course_id: int) -> QuerySet[Allocation]:
    return (
        Allocation.objects.filter(course_id=course_id, ended_at__isnull=True)
        .select_related("node", "static_ip", "group")
        .order_by("node__name")
    )


@login_required
def my_node(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code)
    found = compiled_query(
        "compute.node_page.membership", _membership_with_group, course.pk, request.user.pk
    )
    group = found[0].group if found else None
    gid = group.pk if group else None
    # Every current allocation in one query (one per node: a handful): ours, and the others a
    # window can borrow.
    active = compiled_query("compute.node_page.active", _active_allocations, course.pk)
    for a in active:
        a.course = course  # the same course: no query when the page reads it
    allocation = next((a for a in active if gid and a.group_id == gid), None)
    others = [a for a in active if a.group_id != gid]
    form = WindowRequestForm(
        node_choices=[(str(a.node_id), f"{a.node.name} ({a.group.name})") for a in others],
        zone=course.timezone,
    )
    if request.method == "POST" and allocation is not None:
        form = WindowRequestForm(
            request.POST,
            node_choices=[(str(a.node_id), f"{a.node.name} ({a.group.name})") for a in others],
            zone=course.timezone,
        )
        with timezone.override(course.timezone):
            valid = form.is_valid()
        if valid:
            try:
                w = windows.window_request(
                    actor=request.user,
                    course=course,
                    node_ids=[int(n) for n in form.cleaned_data["nodes"]],
                    starts_at=form.cleaned_data["starts_at"],
                    ends_at=form.cleaned_data["ends_at"],
                    purpose=form.cleaned_data["purpose"],
                    master_port=form.cleaned_data["master_port"] or 29500,
                )
            except DomainError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(
                    request,
                    f"Window #{w.pk} requested; the other groups see it on their node page.",
                )
                return redirect("compute:mine", code=code)
    login = (
        login_names(course.pk, [request.user.pk], os_login=allocation.node.os_login).get(
            request.user.pk
        )
        if allocation is not None
        else None
    )
    return render(
        request,
        "compute/my_node.html",
        {
            "course": course,
            "login": login,
            "may_power": allocation is not None
            and ComputePolicy.objects.filter(course=course, groups_may_power=True).exists(),
            "group": group,
            "allocation": allocation,
            "form": form,
            "windows": window_list(user=request.user, course=course, group_id=gid),
            "group_id": gid,
            "files": FILES,
            "move": NodeMove.objects.filter(group_id=gid).order_by("-requested_at").first()
            if gid
            else None,
            **node_page_context(course, gid, allocation.node if allocation else None),
        },
    )


@login_required
def my_node_file(request: AuthedRequest, code: str, kind: str) -> HttpResponse:
    course = course_for(request, code)
    gid = group_id_of(user=request.user, course=course)
    allocation = (
        Allocation.objects.filter(course=course, group_id=gid, ended_at__isnull=True)
        .select_related("node", "static_ip", "group", "course")
        .first()
        if gid
        else None
    )
    if allocation is None:
        raise Http404("Your group holds no node.")
    login = login_names(course.pk, [request.user.pk], os_login=allocation.node.os_login).get(
        request.user.pk, ""
    )
    return _download(own_node_bundle(allocation=allocation), kind, login)


def _window_for(request: AuthedRequest, course: Course, window_id: int) -> SharingWindow:
    window = window_list(user=request.user, course=course).filter(pk=window_id).first()
    if window is None:
        raise Http404("No such window, or not one of your group's.")
    return window


@login_required
def window_file(request: AuthedRequest, code: str, window_id: int, kind: str) -> HttpResponse:
    course = course_for(request, code)
    window = _window_for(request, course, window_id)
    if window.status != SharingWindow.Status.APPROVED:
        raise PermissionDenied("Access files exist once the window is approved.")
    if not is_staff(request.user, course) and window_needs_record(window):
        messages.error(
            request,
            f"This course asks for a run record before a window starts: record the run of "
            f"window #{window.pk} (code version, config, seed), then download its files.",
        )
        return redirect(f"{reverse('compute:runs', kwargs={'code': code})}?window={window.pk}")
    # Each person's own login name in the SSH config, node by node: the name of their Google
    # identity on a node with OS Login on, the course's login name on the others.
    logins: dict[str, str] = {}
    if not is_staff(request.user, course):
        me = request.user.pk
        by_kind = {
            on: login_names(course.pk, [me], os_login=on).get(me, "") for on in (True, False)
        }
        for name, on in window.nodes.values_list("node__name", "node__os_login"):
            logins[name] = by_kind[bool(on)]
    return _download(window_bundle(window=window), kind, logins=logins)


def _after_window(request: AuthedRequest, course: Course) -> HttpResponse:
    back = "compute:board" if is_staff(request.user, course) else "compute:mine"
    return redirect(request.POST.get("next") or back, code=course.code)


def _decide(
    request: AuthedRequest, course: Course, window_id: int, decide: Any, **extra: Any
) -> HttpResponse:
    """Run one decision on a window the user may see; its new status, or why not, as a message."""
    _window_for(request, course, window_id)
    with errors_as_messages(request):
        w = decide(actor=request.user, course=course, window_id=window_id, **extra)
        messages.success(request, f"Window #{w.pk} is now {w.get_status_display().lower()}.")
    return _after_window(request, course)


@course_action()
def window_approve(request: AuthedRequest, course: Course, window_id: int) -> HttpResponse:
    """An owning group (any member) or staff approve the use of their node in a window; staff
    overriding a lender's pending consent tick the confirmation."""
    confirm = request.POST.get("confirm") == "1"
    return _decide(request, course, window_id, windows.window_approve, confirm=confirm)


@course_action()
def window_cancel(request: AuthedRequest, course: Course, window_id: int) -> HttpResponse:
    """The requesting group or staff cancel a window; the other groups are e-mailed."""
    note = request.POST.get("note", "")
    return _decide(request, course, window_id, windows.window_cancel, note=note)


@course_action()
def window_decline(request: AuthedRequest, course: Course, window_id: int) -> HttpResponse:
    """An owning group or staff decline a requested window, with a reason."""
    note = request.POST.get("note", "")
    return _decide(request, course, window_id, windows.window_decline, note=note)


RANGES = {"week": 7, "3weeks": 21, "term": 0}


@dataclass(frozen=True)
class Span:
    """The stretch of time the windows timeline shows, with the links to the stretches around."""

    range: str
    start: dt.datetime
    days: int
    prev: str
    next: str

    @property
    def end(self) -> dt.datetime:
        return self.start + dt.timedelta(days=self.days)


def _timeline_span(request: AuthedRequest, course: Course) -> Span:
    """`?range=week|3weeks|term&from=YYYY-MM-DD` (default: three weeks from today). The term runs
    from the first lecture to the last deadline of the course file."""
    from apps.calendar.models import Assignment, Lecture, Milestone

    choice = request.GET.get("range", "3weeks")
    choice = choice if choice in RANGES else "3weeks"
    zone = zoneinfo.ZoneInfo(course.timezone)
    today = timezone.now().astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    if choice == "term":
        firsts = [
            d
            for d in (
                Lecture.objects.filter(course=course)
                .order_by("starts_at")
                .values_list("starts_at", flat=True)
                .first(),
            )
            if d
        ]
        lasts = [
            d
            for d in (
                Assignment.objects.filter(course=course)
                .order_by("-due_at")
                .values_list("due_at", flat=True)
                .first(),
                Milestone.objects.filter(course=course)
                .order_by("-due_at")
                .values_list("due_at", flat=True)
                .first(),
            )
            if d
        ]
        start = (
            min(firsts, default=today)
            .astimezone(zone)
            .replace(hour=0, minute=0, second=0, microsecond=0)
        )
        days = max(7, (max(lasts, default=today + dt.timedelta(days=21)) - start).days + 1)
        return Span("term", start, days, "", "")
    days = RANGES[choice]
    try:
        start = dt.datetime.combine(
            dt.date.fromisoformat(request.GET.get("from", "")), dt.time(), tzinfo=zone
        )
    except ValueError:
        start = today
    step = dt.timedelta(days=days)
    return Span(
        choice,
        start,
        days,
        f"?range={choice}&from={(start - step).date().isoformat()}",
        f"?range={choice}&from={(start + step).date().isoformat()}",
    )


@login_required
def board(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    nodes = list(Node.objects.filter(course=course).order_by("name"))
    live = {
        a.node_id: a
        for a in Allocation.objects.filter(course=course, ended_at__isnull=True).select_related(
            "group", "static_ip"
        )
    }
    allocated_groups = {a.group_id for a in live.values()}
    waiting = (
        Group.objects.filter(course=course, dissolved_at__isnull=True)
        .exclude(pk__in=allocated_groups)
        .annotate(size=Count("memberships", filter=Q(memberships__left_at__isnull=True)))
        .order_by("name")
    )
    free_nodes, free_ips = services.free_inventory(course)
    policy = ComputePolicy.objects.filter(course=course).first()
    span = _timeline_span(request, course)
    all_windows = list(window_list(user=request.user, course=course))
    shown = [w for w in all_windows if w.starts_at < span.end and w.ends_at > span.start]
    svg = timeline_svg(nodes, shown, start=span.start, days=span.days, tz=course.timezone)
    return render(
        request,
        "compute/board.html",
        {
            "course": course,
            "rows": [(n, live.get(n.pk)) for n in nodes],
            "waiting": waiting,
            "free_nodes": free_nodes,
            "free_ips": free_ips,
            "pending": [w for w in all_windows if w.status == SharingWindow.Status.REQUESTED],
            "timeline": mark_safe(svg),
            "shown": shown,  # the timeline's windows, also as a table
            "span": span,
            "outside": [
                w
                for w in all_windows
                if w not in shown
                and w.ends_at > timezone.now() - dt.timedelta(days=1)
                and w.status in (SharingWindow.Status.REQUESTED, SharingWindow.Status.APPROVED)
            ],
            "statuses": Node.Status.choices,
            "policy": policy,
            "moves": NodeMove.objects.filter(
                course=course, status=NodeMove.Status.REQUESTED
            ).select_related("group", "from_node"),
            "formation_due": formation.formation_deadline(course),
            "under_minimum": services.groups_under_minimum(course),
            "history": Allocation.objects.filter(course=course).select_related(
                "group", "node", "static_ip"
            )[:30],
        },
    )


@course_action(staff=True)
def formation_run(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff run the formation allocation now (before the deadline, or when it is off)."""
    with errors_as_messages(request):
        result = formation.allocate_at_formation(actor=request.user, course=course)
        if not result.ran:
            messages.info(request, f"Nothing to do: {result.reason}")
        else:
            messages.success(
                request,
                f"Allocated {len(result.allocated)} group(s); each was e-mailed its node, IP and "
                "SSH line.",
            )
            left = result.under_minimum + result.without_node
            if left:
                messages.warning(request, f"Left to you: {', '.join(left)}.")
    return redirect("compute:board", code=course.code)


@course_action(staff=True)
def allocate_all(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff give every group of at least the minimum size a node and IP, or none of them."""
    with errors_as_messages(request):
        made = services.allocate_all(actor=request.user, course=course)
        short = services.groups_under_minimum(course)
        messages.success(
            request,
            f"Allocated {len(made)} group(s)."
            if made
            else "No group at the minimum size is waiting.",
        )
        if short:
            names = ", ".join(f"{g.name} ({n})" for g, n in short)
            messages.warning(
                request,
                f"Left out, under the minimum of {course.group_min_size}: {names}. "
                "Merge them on the groups board, or allocate one with a reason.",
            )
    return redirect("compute:board", code=course.code)


def _choice(raw: str, field: str) -> int | None:
    """A chosen node or IP id from the board's form; empty = the next free one."""
    if not raw.strip():
        return None
    if not raw.strip().isdigit():
        raise DomainError(
            f"Choose a {field} from the list, or leave it on 'next free'.", field=field
        )
    return int(raw)


@course_action(staff=True)
def allocation_create(request: AuthedRequest, course: Course, group_id: int) -> HttpResponse:
    """Staff give one group a node and an IP: the ones chosen, or the next free ones (under the
    minimum size: with a reason)."""
    with errors_as_messages(request):
        a = services.allocation_create(
            actor=request.user,
            course=course,
            group_id=group_id,
            node_id=_choice(request.POST.get("node", ""), "node"),
            ip_id=_choice(request.POST.get("ip", ""), "ip"),
            override_reason=request.POST.get("override_reason", ""),
        )
        messages.success(
            request, f"{a.group.name} now holds {a.node.name} and {a.static_ip.address}."
        )
    return redirect("compute:board", code=course.code)


@course_action(staff=True)
def node_status(request: AuthedRequest, course: Course, node_id: int) -> HttpResponse:
    """Staff mark a node ready, in maintenance, failed or retired."""
    with errors_as_messages(request):
        n = services.node_set_status(
            actor=request.user,
            course=course,
            node_id=node_id,
            status=request.POST.get("status", ""),
        )
        messages.success(request, f"{n.name} is now {n.get_status_display().lower()}.")
    return redirect("compute:board", code=course.code)


@course_action(staff=True)
def allocation_release(request: AuthedRequest, course: Course, allocation_id: int) -> HttpResponse:
    """Staff end an allocation: the group loses its node and IP (history kept)."""
    with errors_as_messages(request):
        a = services.allocation_release(
            actor=request.user, course=course, allocation_id=allocation_id
        )
        messages.success(
            request, f"Released {a.node.name} and {a.static_ip.address} from {a.group.name}."
        )
    return redirect("compute:board", code=course.code)


@login_required
def incidents(request: AuthedRequest, code: str) -> HttpResponse:
    from apps.compute.board.forms import IncidentForm
    from apps.compute.board.incidents import (
        _nodes_for_group,
        course_wide_incidents,
        incident_report,
    )
    from apps.compute.models import Incident

    course = course_for(request, code)
    staff = is_staff(request.user, course)
    gid = group_id_of(user=request.user, course=course)
    node_qs = Node.objects.filter(course=course).order_by("name")
    if not staff:
        node_qs = node_qs.filter(pk__in=_nodes_for_group(course, gid) if gid else [])
    choices = [(n.pk, n.name) for n in node_qs]
    form = IncidentForm(node_choices=choices, zone=course.timezone, staff=staff)
    if request.method == "POST":
        form = IncidentForm(request.POST, node_choices=choices, zone=course.timezone, staff=staff)
        with timezone.override(course.timezone):
            valid = form.is_valid()
        if valid:
            try:
                i = incident_report(
                    actor=request.user,
                    course=course,
                    node_id=form.cleaned_data["node"],
                    occurred_at=form.cleaned_data["occurred_at"],
                    summary=form.cleaned_data["summary"],
                    job_ids=form.cleaned_data["job_ids"],
                    logs=form.cleaned_data["logs"],
                    repro=form.cleaned_data["repro"],
                )
            except DomainError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(
                    request, f"Incident #{i.pk} reported; the course staff have been emailed."
                )
                return redirect("compute:incidents", code=code)
    qs = incident_list(user=request.user, course=course)
    status = request.GET.get("status", "")
    if status in Incident.Status.values:
        qs = qs.filter(status=status)
    return render(
        request,
        "compute/incidents.html",
        {
            "course": course,
            "form": form,
            "page": Paginator(qs.order_by("-created_at", "-pk"), INCIDENTS_PER_PAGE).get_page(
                request.GET.get("page")
            ),
            "staff": staff,
            "status": status,
            "statuses": Incident.Status.choices,
            "can_report": bool(choices),
            "wide": course_wide_incidents(course)[:20],
            "nodes": Node.objects.filter(course=course).exclude(status=Node.Status.RETIRED),
            "in_group": gid is not None,
        },
    )


@login_required
@require_POST
def incident_action(request: AuthedRequest, code: str, incident_id: int) -> HttpResponse:
    from apps.compute.board.incidents import incident_update

    course = course_for(request, code, staff=True)
    try:
        i = incident_update(
            actor=request.user,
            course=course,
            incident_id=incident_id,
            status=request.POST.get("status", ""),
            note=request.POST.get("note", ""),
            course_wide=(
                request.POST.get("course_wide") == "1"
                if request.POST.get("course_wide_shown")
                else None
            ),
        )
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Incident #{i.pk} is {i.get_status_display().lower()}.")
    return redirect("compute:incidents", code=code)


@course_action(student=True)
def incident_affects_us(request: AuthedRequest, course: Course, incident_id: int) -> HttpResponse:
    """A student says a course-wide incident hits their group too."""
    from apps.compute.board.incidents import incident_affects_us as affects_us

    with errors_as_messages(request):
        affects_us(actor=request.user, course=course, incident_id=incident_id)
        messages.success(request, "Noted: the staff see your group is affected too.")
    return redirect("compute:incidents", code=course.code)


@course_action(student=True)
def node_move_request(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member asks staff to move the group off its failed node."""
    from apps.compute.board.moves import move_request

    with errors_as_messages(request):
        move_request(actor=request.user, course=course)
        messages.success(request, "Asked: the staff move you to a spare node, keeping your IP.")
    return redirect("compute:mine", code=course.code)


@course_action(staff=True)
def node_move_approve(request: AuthedRequest, course: Course, move_id: int) -> HttpResponse:
    """Staff move a group to a spare node (same IP)."""
    from apps.compute.board.moves import move_approve

    with errors_as_messages(request):
        m = move_approve(
            actor=request.user,
            course=course,
            move_id=move_id,
            node_id=_choice(request.POST.get("node", ""), "node"),
        )
        messages.success(request, f"{m.group.name} moved to {m.to_node}; they were e-mailed.")
    return redirect("compute:board", code=course.code)


@course_action(staff=True)
def node_move_decline(request: AuthedRequest, course: Course, move_id: int) -> HttpResponse:
    """Staff decline a move request with a reason for the group."""
    from apps.compute.board.moves import move_decline

    with errors_as_messages(request):
        move_decline(
            actor=request.user, course=course, move_id=move_id, note=request.POST.get("note", "")
        )
        messages.success(request, "Declined; the group was told why.")
    return redirect("compute:board", code=course.code)
