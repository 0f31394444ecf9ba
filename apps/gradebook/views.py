"""Gradebook pages. Staff: the board (at-risk first, filters, sorting, distributions, exports),
one student's scores with their history, components and cut-offs, score imports. A student:
their own components, what is missing, why their grade is what it is, and a what-if."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_instructor, is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages
from apps.gradebook import charts, rules, selectors, services, sources
from apps.gradebook.sources import SOURCE_HELP, blend_help
from apps.groups.models import Group, GroupMembership

PAGE = 50


class ScoreForm(forms.Form):
    component = forms.ChoiceField(help_text="The component (or part) to score.")
    student = forms.CharField(
        required=False,
        max_length=254,
        help_text="The student's e-mail. Leave empty to score a whole group.",
    )
    group = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        help_text="Or a group: the score applies to each member without a score of their own.",
    )
    percent = forms.CharField(
        required=False,
        max_length=20,
        help_text="85, 85 % or points as 17/20. Empty clears the score.",
    )
    note = forms.CharField(
        required=False, max_length=300, help_text="Why, for the record (optional)."
    )

    def __init__(self, *args: Any, course: Course, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        leaves = selectors.leaf_components(selectors.components_of(course))
        cast(forms.ChoiceField, self.fields["component"]).choices = [
            (c.key, f"{c.name} ({c.weight:g} %)") for c in leaves
        ]
        groups = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
        cast(forms.ChoiceField, self.fields["group"]).choices = [("", "—")] + [
            (g.pk, g.name) for g in groups.only("pk", "name")[:1000]
        ]


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="CSV: an email, sid or group column and one column per component "
        "(its key or name). Blank cells change nothing. Gradescope's score export (Download "
        "Grades) is read as it is: choose its component below."
    )
    component = forms.ChoiceField(
        required=False,
        label="Component (Gradescope export)",
        help_text="Which component a Gradescope export's Total Score ÷ Max Points is for; "
        "leave empty for a file with a column per component.",
    )

    def __init__(self, *args: Any, leaves: list[Any] = (), **kwargs: Any) -> None:  # type: ignore[assignment]
        super().__init__(*args, **kwargs)
        self.fields["component"].choices = [("", "—")] + [  # type: ignore[attr-defined]
            (c.key, f"{c.name} ({c.key})") for c in leaves
        ]


@login_required
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _staff(request, course)
    return _student(request, course)


def _student(request: AuthedRequest, course: Course) -> HttpResponse:
    user: User = request.user
    components = selectors.components_of(course)
    rows = selectors.gradebook_rows(course, student_ids=[user.pk], components=components)
    if not rows:  # not an active student (dropped): nothing to show
        raise Http404("You have no grades in this course.")
    row = rows[0]
    cutoffs = selectors.cutoffs_of(course)
    target = request.GET.get("target", "")
    what_if = None
    if target:
        what_if = selectors.what_if(components, row, target, cutoffs)
    return render(
        request,
        "gradebook/student.html",
        {
            "course": course,
            "row": row,
            "lines": selectors.grade_lines(components, row),
            "cutoffs": cutoffs,
            "target": target,
            "what_if": what_if,
            "freeze": selectors.freeze_of(course),
        },
    )


def _filtered(request: AuthedRequest, course: Course) -> tuple[list[selectors.Row], dict[str, str]]:
    f = {k: request.GET.get(k, "").strip() for k in ("q", "status", "letter", "sort")}
    rows = selectors.gradebook_rows(course)
    return selectors.filter_rows(rows, **f), f


def _staff(request: AuthedRequest, course: Course) -> HttpResponseBase:
    if request.method == "POST":
        return _score_post(request, course, next_url=request.get_full_path())
    components = selectors.components_of(course)
    leaves = selectors.leaf_components(components)
    not_released = sources.graded_not_released(course)
    preview = bool(not_released) and request.GET.get("preview") == "release"
    with sources.as_if_released() if preview else contextlib.nullcontext():
        all_rows = selectors.gradebook_rows(course, components=components)
    f = {k: request.GET.get(k, "").strip() for k in ("q", "status", "letter", "sort")}
    rows = selectors.filter_rows(all_rows, **f)
    page_ = Paginator(rows, PAGE).get_page(request.GET.get("page"))
    at_risk = [r for r in all_rows if r.at_risk]
    counts: dict[str, int] = {}
    for r in all_rows:
        counts[r.letter or r.status] = counts.get(r.letter or r.status, 0) + 1
    histograms = [
        (c.name, [r.cells[c.key].percent for r in all_rows], float(c.satisfactory_threshold))
        for c in leaves
    ] + [
        (
            "Course total (so far, where incomplete)",
            [r.total if r.total is not None else r.grade.to_date for r in all_rows],
            0.0,
        )
    ]
    svg = charts.distributions_svg(histograms)

    return render(
        request,
        "gradebook/staff.html",
        {
            "course": course,
            "leaves": leaves,
            "page": page_,
            "f": f,
            "rows": [(r, [_cell(c, r.cells[c.key]) for c in leaves]) for r in page_],
            "total": len(rows),
            "n": len(all_rows),
            "at_risk": at_risk[:10],
            "n_at_risk": len(at_risk),
            "not_released": not_released,
            "preview": preview,
            "counts": sorted(counts.items()),
            "letters": [x for x, _ in selectors.cutoffs_of(course)] + ["F"],
            "svg": mark_safe(svg),
            "histogram_rows": charts.distribution_table(histograms),
            "tenths": [f"{t}–{t + 10}" for t in range(0, 100, 10)],
            "statuses": selectors.STATUS_FILTERS,
            "form": ScoreForm(course=course),
            "freeze": selectors.freeze_of(course),
            "instructor": is_instructor(request.user, course),
        },
    )


def _cell(c: Any, cell: selectors.Cell) -> tuple[str, str, str]:
    """(css class, tooltip, text) of one board cell, formatted here: a page of 50 students × 8
    components through template filters costs more than computing the grades."""
    if cell.percent is None:
        return "cell-none", cell.detail or "no score yet", "—"
    below = cell.percent + rules.EPS < float(c.satisfactory_threshold)
    tip = cell.origin + (f": {cell.detail}" if cell.detail else "")
    if below:  # not by colour alone: the mark says it too (the page's legend names it)
        return (
            "cell-bad",
            f"below the satisfactory threshold; {tip}",
            f"▼ {rules.fmt(cell.percent)}",
        )
    return "", tip, rules.fmt(cell.percent)


def _score_post(request: AuthedRequest, course: Course, *, next_url: str) -> HttpResponseBase:
    form = ScoreForm(request.POST, course=course)
    if not form.is_valid():
        messages.error(
            request,
            "; ".join(f"{k}: {' '.join(str(m) for m in v)}" for k, v in form.errors.items()),
        )
        return redirect(next_url)
    d = form.cleaned_data
    try:
        change = services.score_change(
            course=course,
            component_key=d["component"],
            percent=d["percent"],
            note=d["note"],
            student_email=d["student"],
            group_id=d["group"],
        )
        counts = services.scores_apply(actor=request.user, course=course, changes=[change])
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect(next_url)
    if counts["unchanged"]:
        messages.info(request, f"{change.component.name} for {change.who}: unchanged.")
    else:
        shown = "cleared" if change.percent is None else f"{rules.fmt(change.percent)} %"
        messages.success(request, f"{change.component.name} for {change.who}: {shown}.")
    return redirect(next_url)


@login_required
def student_detail(request: AuthedRequest, code: str, user_id: int) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    here = reverse("gradebook:student", kwargs={"code": course.code, "user_id": user_id})
    if request.method == "POST":
        return _score_post(request, course, next_url=here)
    components = selectors.components_of(course)
    rows = selectors.gradebook_rows(course, student_ids=[user_id], components=components)
    if not rows:
        raise Http404("No such student in this course.")
    row = rows[0]
    group = (
        GroupMembership.objects.filter(course=course, user_id=user_id, left_at__isnull=True)
        .values_list("group_id", flat=True)
        .first()
    )
    return render(
        request,
        "gradebook/student_detail.html",
        {
            "course": course,
            "row": row,
            "lines": selectors.grade_lines(components, row),
            "form": ScoreForm(course=course),
            "history": services.score_history(course=course, student_id=user_id, group_id=group),
            "freeze": selectors.freeze_of(course),
        },
    )


@course_action(instructor=True)
def components_save(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Instructors change weights, thresholds, sources and letter cut-offs, all or nothing."""
    with errors_as_messages(request):
        cutoffs, problems = rules.parse_cutoffs(request.POST.get("cutoffs", ""))
        if problems:
            raise DomainError("Letter cut-offs: " + " ".join(problems), field="cutoffs")
        changes = [
            {
                "key": c.key,
                "weight": request.POST.get(f"weight-{c.key}"),
                "satisfactory_threshold": request.POST.get(f"threshold-{c.key}"),
                "source": request.POST.get(f"source-{c.key}"),
            }
            for c in selectors.components_of(course)
        ]
        services.components_update(
            actor=request.user, course=course, changes=changes, cutoffs=cutoffs
        )
        messages.success(request, "Components and cut-offs saved.")
    return redirect("gradebook:components", code=course.code)


@course_action(instructor=True)
def grades_freeze(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Instructors keep every student's course grade as it is now, after confirming."""
    with errors_as_messages(request):
        services.grades_freeze(
            actor=request.user, course=course, confirm=request.POST.get("confirm") == "yes"
        )
        messages.success(
            request, "Grades frozen: every student's course grade is kept as it is now."
        )
    return redirect("gradebook:components", code=course.code)


@course_action(instructor=True)
def grades_unfreeze(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Instructors let scores change again, after confirming."""
    with errors_as_messages(request):
        services.grades_unfreeze(
            actor=request.user, course=course, confirm=request.POST.get("confirm") == "yes"
        )
        messages.success(request, "Grades unfrozen: scores can change again.")
    return redirect("gradebook:components", code=course.code)


@login_required
@require_GET
def components(request: AuthedRequest, code: str) -> HttpResponseBase:
    """The grading scheme: components, weights, thresholds, sources, cut-offs (instructors edit
    through the actions above; TAs read)."""
    course = course_for(request, code, staff=True)
    instructor = is_instructor(request.user, course)
    comps = selectors.components_of(course)
    cutoffs = selectors.cutoffs_of(course)
    parents = {c.parent_id for c in comps if c.parent_id}
    for c in comps:  # how a composed component is made, beside its weight
        c.blend_help = blend_help(c.blend) if c.blend else ""  # type: ignore[attr-defined]
    return render(
        request,
        "gradebook/components.html",
        {
            "course": course,
            "components": [(c, c.pk in parents) for c in comps],
            "instructor": instructor,
            "cutoffs_text": ", ".join(f"{x} {rules.fmt(y)}" for x, y in cutoffs),
            "cutoffs": cutoffs,
            "sources": SOURCE_HELP,
            "freeze": selectors.freeze_of(course),
        },
    )


@login_required
def import_page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    leaves = selectors.leaf_components(selectors.components_of(course))
    form = ImportForm(request.POST or None, request.FILES or None, leaves=leaves)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            record, _ = services.import_upload(
                actor=request.user,
                course=course,
                filename=upload.name,
                data=upload.read(services.imports.MAX_BYTES + 1),
                component_key=form.cleaned_data.get("component") or "",
            )
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("gradebook:import", code=course.code)
        return redirect("gradebook:import-preview", code=course.code, import_id=record.pk)
    if request.GET.get("format") == "template":
        leaves = selectors.leaf_components(selectors.components_of(course))
        manual = [c.key for c in leaves if c.source == "manual"]
        people = selectors.students_of(course).values_list("email", flat=True)
        return csv_response(
            f"{course.code}-scores-template.csv",
            itertools.chain([["email", *manual, "note"]], ([e] for e in people.iterator())),
        )
    return render(
        request, "gradebook/import.html", {"course": course, "form": form, "leaves": leaves}
    )


@login_required
def import_preview(request: AuthedRequest, code: str, import_id: int) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    try:
        record = services.import_get(actor=request.user, course=course, import_id=import_id)
    except DomainError as exc:
        raise Http404(exc.message) from None
    if request.method == "POST":
        try:
            counts = services.import_commit(actor=request.user, course=course, import_id=record.pk)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("gradebook:import-preview", code=course.code, import_id=record.pk)
        messages.success(
            request,
            f"Imported: {counts['set']} set, {counts['cleared']} cleared, "
            f"{counts['unchanged']} unchanged.",
        )
        return redirect("gradebook:page", code=course.code)
    plan = services.import_plan(
        course=course, data=bytes(record.content), component_key=record.component_key
    )
    return render(
        request,
        "gradebook/import_preview.html",
        {
            "course": course,
            "record": record,
            "plan": plan,
            "changes": plan.changes[:200],
            "more": max(0, len(plan.changes) - 200),
        },
    )


@login_required
def export(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    rows, _ = _filtered(request, course)
    shape = "canvas" if request.GET.get("shape") == "canvas" else "plain"
    return csv_response(
        f"{course.code}-grades-{shape}.csv", selectors.export_rows(course, rows, shape)
    )
