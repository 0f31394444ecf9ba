"""Similarity pages (staff only): the checks with the upload form, one check's ranked group
pairs (paged, filtered, CSV), and one pair side by side with the matching regions marked."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.calendar.models import Milestone
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.views_helpers import course_action, course_for
from apps.integrity import selectors, services
from apps.integrity.forms import UploadForm
from apps.integrity.models import SimilarityCheck
from apps.integrity.render import highlighted_lines

PAGE = 50


def _milestones(course: Course) -> list[tuple[int, str]]:
    return list(
        Milestone.objects.filter(course=course, tracked=True)
        .order_by("due_at")
        .values_list("pk", "name")
    )


def _check(request: AuthedRequest, course: Course, check_id: int) -> SimilarityCheck:
    try:
        return selectors.check_get(user=request.user, course=course, check_id=check_id)
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from exc
    except NotFound as exc:
        raise Http404(exc.message) from exc


@login_required
@require_GET
def checks(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    rows = selectors.check_list(user=request.user, course=course)
    page = Paginator(rows, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "integrity/checks.html",
        {"course": course, "page": page, "form": UploadForm(milestones=_milestones(course))},
    )


@course_action(staff=True)
def upload(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff upload submissions; refused archives say why and store nothing."""
    form = UploadForm(request.POST, request.FILES, milestones=_milestones(course))
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label or name.capitalize() if name in form.fields else ""
            messages.error(request, f"{label}: {' '.join(str(e) for e in errors)}")
        return redirect("integrity:checks", code=course.code)
    starter = form.cleaned_data.get("starter")
    try:
        made = services.similarity_upload(
            actor=request.user,
            course=course,
            title=form.cleaned_data["title"],
            data=form.cleaned_data["archive"].read(),
            starter=starter.read() if starter else None,
            milestone_id=form.cleaned_data.get("milestone"),
            threshold=form.cleaned_data["threshold"] / 100,
        )
    except DomainError as exc:
        messages.error(request, exc.message, extra_tags="refused-upload")
        return redirect("integrity:checks", code=course.code)
    if made.reused:
        check = made.check
        said = [f"These inputs were checked before ({check.title}): "]
        if made.was_threshold is not None:
            said.append(
                f"its pairs are now flagged at {round(check.threshold * 100)} % "
                f"(was {round(made.was_threshold * 100)} %)"
            )
        else:
            said.append(f"its results are shown, flagged at {round(check.threshold * 100)} %")
        if made.was_milestone is not None and check.milestone is not None:
            said.append(
                f"; declared sources are now from {check.milestone.name} "
                f"(was {made.was_milestone or 'none'})"
            )
        elif check.milestone is not None:
            said.append(f"; declared sources are from {check.milestone.name}")
        said.append("; nothing was compared again.")
        messages.info(request, "".join(said))
    else:
        messages.success(request, f"{made.check.title}: queued for a worker.")
    return redirect("integrity:check", code=course.code, check_id=made.check.pk)


@login_required
@require_GET
def check_detail(request: AuthedRequest, code: str, check_id: int) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    check = _check(request, course, check_id)
    q = request.GET.get("q", "").strip()[:100]
    flagged = request.GET.get("flagged") == "1"
    rows = selectors.pair_list(check=check, q=q, flagged_only=flagged)
    page = Paginator(rows, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "integrity/check.html",
        {
            "course": course,
            "check": check,
            "page": page,
            "q": q,
            "flagged": flagged,
            "offset": (page.number - 1) * PAGE,
        },
    )


@login_required
@require_GET
def export(request: AuthedRequest, code: str, check_id: int) -> HttpResponseBase:
    course = course_for(request, code, staff=True)
    check = _check(request, course, check_id)
    rows = selectors.pair_list(
        check=check,
        q=request.GET.get("q", "").strip()[:100],
        flagged_only=request.GET.get("flagged") == "1",
    )
    return csv_response(
        f"{course.code}-similarity-{check.pk}.csv", services.export_rows(check, rows.iterator())
    )


@login_required
@require_GET
def pair_detail(request: AuthedRequest, code: str, check_id: int, match_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    check = _check(request, course, check_id)
    try:
        pair = selectors.pair_get(check=check, pair_id=match_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    shown = [
        {
            **f,
            "lines_a": highlighted_lines(f["a"].text, f["slices_a"]),
            "lines_b": highlighted_lines(f["b"].text, f["slices_b"]),
        }
        for f in selectors.pair_files(pair)[:10]
    ]
    declared = selectors.declarations(check, [pair.group_a_id, pair.group_b_id])
    return render(
        request,
        "integrity/pair.html",
        {
            "course": course,
            "check": check,
            "pair": pair,
            "files": shown,
            "declared_a": declared.get(pair.group_a_id),
            "declared_b": declared.get(pair.group_b_id),
        },
    )
