"""Run records pages: a group's runs with the form to record one; staff search every group's
and export them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.compute.board import runs
from apps.compute.board.forms import RunRecordForm
from apps.compute.board.selectors import group_id_of
from apps.compute.models import MAX_CONFIG_BYTES, SharingWindow
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_for
from apps.groups.models import Group

PAGE = 25


@login_required
def run_list(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code)
    staff = is_staff(request.user, course)
    gid = None if staff else group_id_of(user=request.user, course=course)
    window_choices = []
    if gid is not None:
        window_choices = [
            (w.pk, f"#{w.pk} {w.purpose or 'multi-node run'} ({w.get_status_display().lower()})")
            for w in SharingWindow.objects.filter(course=course)
            .filter(Q(requester_id=gid) | Q(nodes__owner_id=gid))
            .distinct()
            .order_by("-starts_at")[:50]
        ]
    initial = {"window": request.GET.get("window")} if request.GET.get("window") else None
    form = RunRecordForm(window_choices=window_choices, initial=initial)
    if request.method == "POST" and gid is not None:
        form = RunRecordForm(request.POST, request.FILES, window_choices=window_choices)
        if form.is_valid():
            data = dict(form.cleaned_data)
            upload = data.pop("config_file", None)
            if upload is not None:
                raw = upload.read(MAX_CONFIG_BYTES + 1)
                try:
                    data["config_text"] = raw.decode("utf-8")
                except UnicodeDecodeError:
                    form.add_error("config_file", "The configuration file is not UTF-8 text.")
                    raw = b""
                if len(raw) > MAX_CONFIG_BYTES:
                    form.add_error("config_file", "The configuration is at most 256 KB.")
            if not form.errors:
                try:
                    r = runs.run_record_create(actor=request.user, course=course, data=data)
                except DomainError as exc:
                    field = exc.field if exc.field in form.fields else None
                    form.add_error(field, exc.message)
                else:
                    messages.success(request, f"Run #{r.pk} “{r.title}” recorded.")
                    return redirect("compute:runs", code=code)
    q = request.GET.get("q", "")
    try:
        group_filter = int(request.GET.get("group", "") or 0) or None
    except ValueError:
        group_filter = None
    qs = runs.run_records(user=request.user, course=course, q=q, group_id=group_filter)
    page = Paginator(qs, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "compute/runs.html",
        {
            "course": course,
            "staff": staff,
            "in_group": gid is not None,
            "form": form,
            "page": page,
            "q": q,
            "group_filter": group_filter,
            "groups": Group.objects.filter(course=course).order_by("name") if staff else [],
        },
    )


@login_required
@require_GET
def run_export(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Every run record the user may read (staff: all, filtered like the page), as CSV."""
    course = course_for(request, code)
    qs = runs.run_records(user=request.user, course=course, q=request.GET.get("q", ""))
    rows = [runs.EXPORT_HEADER, *runs.export_rows(qs.order_by("group__name", "created_at"))]
    return csv_response(f"{course.code}-runs.csv", rows)
