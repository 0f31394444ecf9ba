"""Participation pages: a student's own record and score; staff record events one by one or by
CSV (preview, then all or nothing), see every student's summary (paged, searchable) and one
student's events, and export the summary."""

from __future__ import annotations

import itertools
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

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
from apps.participation import rules, selectors, services
from apps.participation.models import KINDS

PAGE = 50


class EventForm(forms.Form):
    student = forms.EmailField(help_text="The student's e-mail.")
    kind = forms.ChoiceField(choices=KINDS, help_text="What they did.")
    occurred_on = forms.DateField(
        label="Date",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="The day it happened.",
    )
    note = forms.CharField(
        required=False, max_length=300, help_text="Optional: which lecture, thread or slide."
    )


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="CSV with email (or sid), kind, date (YYYY-MM-DD) and an optional note."
    )


def _kinds_help() -> str:
    return ", ".join(k for k, _ in KINDS)


def _context(course: Course) -> dict[str, Any]:
    return {
        "course": course,
        "weight": rules.ATTENDANCE_WEIGHT,
        "target": rules.CONTRIBUTIONS_TARGET,
        "kinds": KINDS,
    }


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Students: their own participation; staff: every student, the forms to record one event
    or import a CSV (each posts to its own action view), and a CSV export."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _staff_page(request, course)
    events = selectors.event_list(user=request.user, course=course)
    summary = selectors.summaries(course, [request.user.pk])[request.user.pk]
    return render(
        request,
        "participation/student.html",
        _context(course)
        | {"summary": summary, "page": Paginator(events, PAGE).get_page(request.GET.get("page"))},
    )


def _back(request: AuthedRequest, course: Course) -> HttpResponseBase:
    here = reverse("participation:page", kwargs={"code": course.code})
    return redirect_with_back_query(request, here)


@course_action(staff=True)
def event_record(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff record one attendance, answer or post for a student."""
    form = EventForm(request.POST)
    if not form.is_valid():
        return _staff_page(request, course, form=form)
    d = form.cleaned_data
    try:
        e = services.event_record(
            actor=request.user,
            course=course,
            student_email=d["student"],
            kind=d["kind"],
            occurred_on=d["occurred_on"],
            note=d["note"],
        )
    except DomainError as exc:
        messages.error(request, exc.message, extra_tags=f"refused-{exc.code}")
        return _staff_page(request, course, form=form)
    who = e.student.get_full_name() or e.student.email
    messages.success(request, f"Recorded: {e.get_kind_display()} for {who}.")
    return _back(request, course)


@course_action(staff=True)
def events_import(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff upload a CSV of events; the preview names every problem before anything is stored."""
    upload = ImportForm(request.POST, request.FILES)
    if not upload.is_valid():
        return _staff_page(request, course, upload=upload)
    f = upload.cleaned_data["file"]
    try:
        record, _ = services.import_upload(
            actor=request.user, course=course, filename=f.name, data=f.read(services.MAX_BYTES + 1)
        )
    except DomainError as exc:
        messages.error(request, exc.message, extra_tags=f"refused-{exc.code}")
        return _staff_page(request, course, upload=upload)
    return redirect("participation:import-preview", code=course.code, import_id=record.pk)


@course_action(staff=True)
def event_delete(request: AuthedRequest, course: Course, event_id: int) -> HttpResponseBase:
    """Staff remove one recorded event."""
    with errors_as_messages(request):
        services.event_delete(actor=request.user, course=course, event_id=event_id)
        messages.success(request, "Removed.")
    return _back(request, course)


def _staff_page(
    request: AuthedRequest,
    course: Course,
    *,
    form: EventForm | None = None,
    upload: ImportForm | None = None,
) -> HttpResponseBase:
    ctx = _context(course)
    form = form or EventForm(initial={"occurred_on": timezone.localdate()})
    upload = upload or ImportForm()
    q = request.GET.get("q", "").strip()
    students = User.objects.filter(
        memberships__course=course, memberships__role="student", memberships__is_active=True
    ).order_by("full_name", "email")
    if q:
        students = students.filter(
            Q(full_name__icontains=q) | Q(email__icontains=q) | Q(sid__icontains=q)
        )
    if request.GET.get("format") == "csv":
        sums = selectors.summaries(course)
        empty = selectors.Summary(held=selectors.lectures_held(course))
        header = ["email", "name", *(k for k, _ in KINDS), "lectures held", "score"]
        rows = (
            [
                u.email,
                u.full_name,
                *(sums.get(u.pk, empty).counts.get(k, 0) for k, _ in KINDS),
                empty.held,
                "" if (s := sums.get(u.pk, empty).score) is None else f"{s:.1f}",
            ]
            for u in students.iterator()
        )
        return csv_response(f"{course.code}-participation.csv", itertools.chain([header], rows))
    page_ = Paginator(students, PAGE).get_page(request.GET.get("page"))
    sums = selectors.summaries(course, [u.pk for u in page_])
    focus = None
    if request.GET.get("student"):
        focus = students.model.objects.filter(email__iexact=request.GET["student"]).first()
        if focus is None:
            raise Http404("No such student.")
    focus_events = (
        selectors.event_list(user=request.user, course=course).filter(student=focus)[:200]
        if focus
        else []
    )
    return render(
        request,
        "participation/staff.html",
        ctx
        | {
            "form": form,
            "upload": upload,
            "page": page_,
            "q": q,
            "kinds_help": _kinds_help(),
            "rows": [
                (u, [sums[u.pk].counts.get(k, 0) for k, _ in KINDS], sums[u.pk].score)
                for u in page_
            ],
            "held": selectors.lectures_held(course),
            "focus": focus,
            "focus_events": focus_events,
        },
    )


@login_required
def import_preview(request: AuthedRequest, code: str, import_id: int) -> HttpResponseBase:
    course: Course = course_for(request, code, staff=True)
    try:
        record = services.import_get(actor=request.user, course=course, import_id=import_id)
    except DomainError as exc:
        raise Http404(exc.message) from None
    if request.method == "POST":
        try:
            n = services.import_commit(actor=request.user, course=course, import_id=record.pk)
            messages.success(request, f"Imported {n} event(s).")
            return redirect("participation:page", code=course.code)
        except DomainError as exc:
            messages.error(request, exc.message)
    plan = services.import_plan(course=course, data=bytes(record.content))
    return render(
        request,
        "participation/import_preview.html",
        {"course": course, "record": record, "plan": plan},
    )
