"""Milestone pages: a student's group row (record a link; what is next), the staff board (groups
× milestones coloured by status, trouble first, paged, CSV) and the milestone edit page."""

from __future__ import annotations

import itertools
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.calendar.models import Milestone
from apps.calendar.views import course_datetime_field, deadline_edit
from apps.core import integrity
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.integrity import DeclarationFormMixin
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import (
    course_action,
    course_for,
    errors_as_messages,
    form_kept,
    int_or_none,
)
from apps.groups.models import Group
from apps.milestones import rules, services
from apps.milestones.selectors import (
    board_groups,
    cells_for_groups,
    group_of,
    tracked_milestones,
)
from apps.milestones.services import milestone_move_impact

PAGE = 50


class SubmitForm(DeclarationFormMixin):
    link = forms.URLField(
        max_length=500,
        label="Link to your submission",
        assume_scheme="https",
        help_text="The full https:// address (Gradescope, Overleaf, Google Docs, GitHub …). "
        "Recording it again replaces it; after the deadline it counts as late.",
    )
    sources = forms.CharField(
        required=False,
        max_length=services.MAX_SOURCES,
        label="Sources and AI use",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What you used (code, papers, datasets, AI assistants) and where in the "
        "submission, e.g. “ChatGPT: first draft of §3; train.py adapted from the nanoGPT repo”. "
        "Required where the milestone asks for it.",
    )


class ExtendForm(forms.Form):
    group = forms.CharField(
        help_text="The group's name, exactly.", widget=forms.TextInput(attrs={"list": "ms-groups"})
    )
    hours = forms.IntegerField(
        min_value=0,
        max_value=services.MAX_EXTENSION_HOURS,
        help_text="Hours after the milestone's due time; 0 removes the extension.",
    )
    reason = forms.CharField(max_length=300, help_text="Kept in the audit trail.")


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """A group's milestones with the link form; staff: the board. Changes post below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _board(request, course)
    group = group_of(course=course, user=request.user)
    cells = cells_for_groups(course=course, groups=[group])[group.pk] if group else []
    now = timezone.now()
    upcoming = [c for c in cells if c.due > now and c.status == rules.Status.NOT_SUBMITTED]
    return render(
        request,
        "milestones/mine.html",
        {
            "course": course,
            "group": group,
            "cells": cells,
            "next": upcoming[0] if upcoming else None,
            "form": SubmitForm(),
        },
    )


@course_action(student=True)
def milestone_submit(request: AuthedRequest, course: Course, milestone_id: int) -> HttpResponse:
    """A member records the group's submission link; after the deadline it counts as late."""
    form = SubmitForm(request.POST)
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else ""
            said = [str(e) for e in errors]
            if name == "link":
                said = ["Give the full https:// address of your submission."]
            messages.error(request, f"{label}: {' '.join(said)}" if label else " ".join(said))
    else:
        try:
            rec = services.milestone_submit(
                actor=request.user,
                course=course,
                milestone_id=milestone_id,
                link=form.cleaned_data["link"],
                ai_used=form.cleaned_data["ai_used"],
                ai_description=form.cleaned_data["ai_description"],
                sources=form.cleaned_data.get("sources") or "",
            )
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            status = rules.milestone_status(
                due=rec.milestone.due_at,
                extension_hours=rec.extension_hours,
                submitted_at=rec.submitted_at,
                excused=rec.excused,
            )
            messages.success(
                request,
                f"Recorded {rec.milestone.name} for {rec.group.name}: {rules.LABELS[status]}.",
            )
    return redirect("milestones:page", code=course.code)


def _board(request: AuthedRequest, course: Course) -> HttpResponseBase:
    q = request.GET.get("q", "").strip()
    status = request.GET.get("status", "")
    milestones = tracked_milestones(course=course)
    groups = board_groups(course=course, q=q, status=status)
    page_ = Paginator(groups, PAGE).get_page(request.GET.get("page"))
    cells = cells_for_groups(course=course, groups=page_, milestones=milestones)
    rows = [(g, cells[g.pk]) for g in page_]
    return render(
        request,
        "milestones/board.html",
        {
            "course": course,
            "milestones": milestones,
            "rows": rows,
            "page": page_,
            "q": q,
            "status": status,
            "statuses": [
                ("", "all"),
                ("overdue", "overdue"),
                ("late", "late"),
                ("submitted", "submitted"),
                ("excused", "excused"),
            ],
            "extend_form": _extend_form(request),
            "group_names": Group.objects.filter(course=course, dissolved_at__isnull=True)
            .order_by("name")
            .values_list("name", flat=True),
        },
    )


EXTEND_IDS = {"group": "id_group", "hours": "id_hours", "reason": "id_reason", "milestone": "ms"}


def _extend_form(request: AuthedRequest) -> ExtendForm:
    """The extension form, bound to what was typed when the last post was refused, so each
    field shows its own error (aria-invalid, described by the message)."""
    kept = form_kept(request, "extend")
    if not kept:
        return ExtendForm()
    form = ExtendForm(kept["data"])
    form.is_valid()
    if kept["field"] in form.fields and not form.has_error(kept["field"]):
        form.add_error(kept["field"], kept["message"])
    return form


def _extension_target(request: AuthedRequest, course: Course) -> tuple[Group, dict[str, Any]]:
    """The group and the cleaned form of the extension-or-excuse form, or a refusal naming what
    is missing."""
    form = ExtendForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{k}: {' '.join(str(x) for x in v)}" for k, v in form.errors.items())
        raise DomainError(
            f"Give the group's name, the hours and a reason: {problems}",
            field=next(iter(form.errors)),
        )
    if int_or_none(request.POST.get("milestone")) is None:
        raise DomainError("Choose the milestone.", field="milestone")
    name = form.cleaned_data["group"].strip()
    group = Group.objects.filter(
        course=course, dissolved_at__isnull=True, name__iexact=name
    ).first()
    if group is None:
        raise DomainError(f"No group named {name!r} in this course.", field="group")
    return group, form.cleaned_data


@course_action(staff=True)
def milestone_extend(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff give one group extra hours on a milestone, with a reason."""
    with errors_as_messages(request, form="extend", field_ids=EXTEND_IDS):
        group, data = _extension_target(request, course)
        milestone_id = int(request.POST["milestone"])
        services.milestone_extend(
            actor=request.user,
            course=course,
            milestone_id=milestone_id,
            group_id=group.pk,
            hours=data["hours"],
            reason=data["reason"],
        )
        messages.success(request, f"{group.name}: extension of {data['hours']} h saved.")
    return redirect("milestones:page", code=course.code)


def _excuse(request: AuthedRequest, course: Course, *, excused: bool) -> HttpResponse:
    with errors_as_messages(request, form="extend", field_ids=EXTEND_IDS):
        group, data = _extension_target(request, course)
        milestone_id = int(request.POST["milestone"])
        services.milestone_excuse(
            actor=request.user,
            course=course,
            milestone_id=milestone_id,
            group_id=group.pk,
            excused=excused,
            reason=data["reason"],
        )
        messages.success(request, f"{group.name}: {'excused' if excused else 'no longer excused'}.")
    return redirect("milestones:page", code=course.code)


@course_action(staff=True)
def milestone_excuse(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff excuse one group from a milestone, with a reason."""
    return _excuse(request, course, excused=True)


@course_action(staff=True)
def milestone_unexcuse(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff take an excuse back."""
    return _excuse(request, course, excused=False)


@course_action(staff=True)
def milestone_sources(request: AuthedRequest, course: Course, milestone_id: int) -> HttpResponse:
    """Staff ask (or stop asking) groups for a sources and AI-use statement on a milestone."""
    required = request.POST.get("required") == "1"
    with errors_as_messages(request):
        m = services.milestone_sources_require(
            actor=request.user, course=course, milestone_id=milestone_id, required=required
        )
        messages.success(
            request,
            f"{m.name}: "
            + (
                "groups now give a sources and AI-use statement."
                if required
                else "no statement asked."
            ),
        )
    return redirect("milestones:page", code=course.code)


@login_required
def export(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Every group × tracked milestone of the filtered board, streamed."""
    course = course_for(request, code, staff=True)
    milestones = tracked_milestones(course=course)
    groups = board_groups(
        course=course, q=request.GET.get("q", "").strip(), status=request.GET.get("status", "")
    )
    header = [
        "group",
        "milestone",
        "status",
        "group deadline",
        "extension hours",
        "link",
        "submitted at",
        "submitted by",
        *integrity.EXPORT_HEADER,
        "sources",
    ]

    def rows() -> Any:
        for chunk in _chunks(groups.iterator(chunk_size=200), 200):
            for cells in cells_for_groups(
                course=course, groups=chunk, milestones=milestones
            ).values():
                for c in cells:
                    r = c.record
                    yield [
                        c.group.name,
                        c.milestone.name,
                        c.label,
                        c.due.isoformat(),
                        r.extension_hours if r else 0,
                        r.link if r else "",
                        r.submitted_at.isoformat() if r and r.submitted_at else "",
                        (r.submitted_by.email if r and r.submitted_by else ""),
                        *(integrity.export_cells(r) if r else ["", ""]),
                        r.sources if r else "",
                    ]

    return csv_response(f"{course.code}-milestones.csv", itertools.chain([header], rows()))


def _chunks(items: Any, size: int) -> Any:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


class MilestoneForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="As students see it.")
    due_at = course_datetime_field(
        "Due", "Course-local date and time. Group extensions stay relative to it."
    )


@login_required
def milestone_edit(request: AuthedRequest, code: str, milestone_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    m = Milestone.objects.filter(course=course, pk=milestone_id).first()
    if m is None:
        raise Http404("No such milestone.")
    form = MilestoneForm(
        request.POST or None, initial={"name": m.name, "due_at": m.due_at.astimezone(course.tz)}
    )

    def save(cleaned: dict[str, Any], new_due: Any, confirm: bool) -> None:
        services.milestone_update(
            actor=request.user,
            course=course,
            milestone_id=m.pk,
            name=cleaned["name"],
            due_at=new_due,
            confirm=confirm,
        )

    return deadline_edit(
        request,
        course=course,
        form=form,
        what=m.name,
        old_due=m.due_at,
        impact_of=lambda new_due: milestone_move_impact(
            course=course, milestone=m, new_due=new_due
        ),
        save=save,
        back=reverse("calendar:calendar", kwargs={"code": code}) + "?view=list",
    )
