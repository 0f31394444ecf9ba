"""Assessment pages. Staff: create an assessment, open each form for a window, import a CSV per
administration (preview with every problem by row and column, then store all or nothing), the
report with its pictures, exports (de-identified CSV, JSON summary), publish, destroy the ID map.
Students: the timed form (consent first) and their own scores; the report once published."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe

from apps.assessments import charts, report, services
from apps.assessments.models import (
    Administration,
    Assessment,
    IdentityLink,
    Response,
    ResponseImport,
)
from apps.autograder.models import Question, QuestionSet
from apps.calendar.views import local_to_utc
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_instructor, is_staff, is_student
from apps.core.views_helpers import course_for
from apps.core.views_helpers import int_or_none as _int


def _when(text: str, course: Course, field: str) -> dt.datetime | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return local_to_utc(dt.datetime.fromisoformat(text), course.tz)
    except (ValueError, OverflowError):
        raise DomainError(f"Give {field} as a date and time.", field=field) from None


@login_required
def index(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    user: User = request.user
    staff = is_staff(user, course)
    if request.method == "POST":
        if not staff:
            messages.error(request, "Only course staff create assessments.")
            return redirect("assessments:list", code=code)
        try:
            windows = {
                p: (
                    _when(request.POST.get(f"{p}_opens_at", ""), course, f"{p} opens"),
                    _when(request.POST.get(f"{p}_closes_at", ""), course, f"{p} closes"),
                )
                for p in ("pre", "post")
            }
            a = services.create(
                actor=user,
                course=course,
                question_set_id=_int(request.POST.get("question_set")) or 0,
                title=request.POST.get("title", ""),
                time_limit_minutes=_int(request.POST.get("time_limit_minutes")) or 5,
                windows=windows,
            )
            messages.success(request, f"“{a.title}” created.")
            return redirect("assessments:detail", code=code, assessment_id=a.pk)
        except DomainError as exc:
            messages.error(request, exc.message)
        return redirect("assessments:list", code=code)
    assessments = list(
        Assessment.objects.filter(course=course)
        .select_related("question_set")
        .prefetch_related("administrations")
    )
    mine: dict[int, list[Response]] = (
        {a.pk: services.own_responses(a, user) for a in assessments} if not staff else {}
    )
    now = timezone.now()
    rows = [
        {
            "a": a,
            "mine": mine.get(a.pk, []),
            "open": [
                adm
                for adm in a.administrations.all()
                if adm.opens_at
                and adm.opens_at <= now
                and (not adm.closes_at or now <= adm.closes_at)
            ],
        }
        for a in assessments
    ]
    return render(
        request,
        "assessments/index.html",
        {
            "course": course,
            "staff": staff,
            "rows": rows,
            "sets": QuestionSet.objects.filter(course=course).order_by("title"),
        },
    )


def _context_report(a: Assessment) -> dict[str, Any]:
    data = report.build(a)
    pre, post, paired = data["phases"]["pre"], data["phases"]["post"], data["paired"]
    hist = (
        charts.histograms_svg(
            pre.get("histogram", []), post.get("histogram", []), data["assessment"]["max_points"]
        )
        if not pre["suppressed"] and not post["suppressed"]
        else ""
    )
    return {
        "data": data,
        "hist_svg": mark_safe(hist),
        "goals_svg": mark_safe(charts.goal_gains_svg(paired["goals"]))
        if not paired["suppressed"]
        else "",
        "misc_svg": mark_safe(charts.misconceptions_svg(data["misconceptions"])),
        "items": list(
            zip(
                paired.get("items", []),
                [pre.get("items", {}).get(i["question"]) for i in paired.get("items", [])],
                strict=False,
            )
        ),
    }


def _id_map_rows(a: Assessment) -> Iterator[list[str]]:
    """The participant-ID → student map as CSV rows, header first (instructors only)."""
    yield ["participant", "name", "email"]
    links = IdentityLink.objects.filter(participant__assessment=a).select_related(
        "participant", "user"
    )
    for x in links.order_by("participant__code"):
        yield [x.participant.code, x.user.get_full_name(), x.user.email]


@login_required
def detail(request: AuthedRequest, code: str, assessment_id: int) -> HttpResponseBase:
    course = course_for(request, code)
    user: User = request.user
    a = services.get(course, assessment_id)
    staff = is_staff(user, course)
    if request.method == "POST":
        if not staff:
            messages.error(request, "Only course staff change an assessment.")
            return redirect("assessments:detail", code=code, assessment_id=a.pk)
        return _post(request, course, a)
    fmt = request.GET.get("format")
    if fmt and (staff or a.published_at):
        if fmt == "json":
            response = HttpResponse(
                json.dumps(report.build(a), indent=2, ensure_ascii=False),
                content_type="application/json",
            )
            response["Content-Disposition"] = (
                f'attachment; filename="{course.code}-assessment-{a.pk}-summary.json"'
            )
            return response
        if fmt == "csv" and staff:
            return csv_response(
                f"{course.code}-assessment-{a.pk}-participants.csv", report.participants_csv_rows(a)
            )
    if fmt == "map" and is_instructor(user, course):  # the ID → student map, instructors only
        return csv_response(f"{course.code}-assessment-{a.pk}-id-map.csv", _id_map_rows(a))
    ctx: dict[str, Any] = {
        "course": course,
        "a": a,
        "staff": staff,
        "now": timezone.now(),
        "administrations": sorted(a.administrations.all(), key=lambda x: x.phase != "pre"),
        "instructor": is_instructor(user, course),
    }
    if staff or a.published_at:
        ctx.update(_context_report(a))
    if staff:
        ctx["imports"] = ResponseImport.objects.filter(assessment=a).defer("data")[:10]
        ctx["shown_import"] = (
            ResponseImport.objects.filter(assessment=a, pk=_int(request.GET.get("import")) or 0)
            .defer("data")
            .first()
        )
        ctx["links"] = a.participants.filter(identity__isnull=False).count()
    else:
        ctx["mine"] = services.own_responses(a, user)
        ctx["questions"] = {q.key: q for q in services.questions_of(a)}
    return render(request, "assessments/detail.html", ctx)


def _post(request: AuthedRequest, course: Course, a: Assessment) -> HttpResponseBase:
    user: User = request.user
    action = request.POST.get("action", "")
    suffix = ""
    try:
        if action == "window":
            phase = request.POST.get("phase", "")
            services.window_set(
                actor=user,
                course=course,
                assessment_id=a.pk,
                phase=phase,
                opens_at=_when(request.POST.get("opens_at", ""), course, "opens"),
                closes_at=_when(request.POST.get("closes_at", ""), course, "closes"),
            )
            messages.success(request, f"The {phase} form's window is saved.")
        elif action == "import":
            f = request.FILES.get("file")
            if f is None:
                raise DomainError("Choose a CSV file.", field="file")
            imp = services.import_preview(
                actor=user,
                course=course,
                assessment_id=a.pk,
                phase=request.POST.get("phase", ""),
                filename=f.name or "upload.csv",
                data=f.read(services.MAX_UPLOAD + 1),
            )
            suffix = f"?import={imp.pk}#import"
        elif action == "commit":
            imp = services.import_commit(
                actor=user,
                course=course,
                assessment_id=a.pk,
                import_id=_int(request.POST.get("import")) or 0,
            )
            messages.success(
                request,
                f"Stored {imp.report.get('rows', 0)} {imp.phase} responses from {imp.filename}.",
            )
        elif action in ("publish", "unpublish"):
            services.publish(
                actor=user, course=course, assessment_id=a.pk, published=action == "publish"
            )
            messages.success(
                request,
                "Report published to students."
                if action == "publish"
                else "Report hidden from students.",
            )
        elif action == "destroy":
            n = services.identities_destroy(
                actor=user,
                course=course,
                assessment_id=a.pk,
                confirm=request.POST.get("confirm") == "yes",
            )
            messages.success(
                request,
                f"The ID map is destroyed ({n} links). Scores and the report are unchanged.",
            )
        else:
            messages.error(request, "Unknown action.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect(f"/c/{course.code}/assessments/{a.pk}/{suffix}")


@login_required
def take(request: AuthedRequest, code: str, assessment_id: int) -> HttpResponseBase:
    """The timed form: the notice and consent first; the clock runs on the server from then."""
    course = course_for(request, code)
    user: User = request.user
    a = services.get(course, assessment_id)
    phase = request.GET.get("phase") or request.POST.get("phase") or "pre"
    if phase not in Administration.Phase.values:
        phase = "pre"
    here = f"/c/{course.code}/assessments/{a.pk}/take/?phase={phase}"
    questions = services.questions_of(a)
    if request.method == "POST" and not is_student(user, course):
        messages.error(request, "Only the course's students take the quiz; staff see the report.")
        return redirect("assessments:detail", code=code, assessment_id=a.pk)
    if request.method == "POST":
        try:
            if request.POST.get("action") == "start":
                services.form_start(
                    actor=user,
                    course=course,
                    assessment_id=a.pk,
                    phase=phase,
                    consent=request.POST.get("consent") == "on",
                    no_research=request.POST.get("no_research") == "on",
                )
            else:
                r = services.form_submit(
                    actor=user,
                    course=course,
                    assessment_id=a.pk,
                    phase=phase,
                    answers=services.answers_from_post(questions, request.POST),
                )
                messages.success(
                    request,
                    f"Recorded: {r.total:g} of {sum(q.points for q in questions):g} points.",
                )
                return redirect("assessments:detail", code=code, assessment_id=a.pk)
        except DomainError as exc:
            messages.error(request, exc.message)
        return redirect(here)
    participant = services.participant_for(a, user, create=False)
    response = (
        Response.objects.filter(participant=participant, administration__phase=phase).first()
        if participant
        else None
    )
    started = response is not None and response.status == Response.Status.STARTED
    return render(
        request,
        "assessments/take.html",
        {
            "course": course,
            "a": a,
            "phase": phase,
            "response": response,
            "started": started,
            "deadline": services.deadline_of(response) if started and response else None,
            "questions": [(q, list(range(max(len(q.parts), 1)))) for q in questions],
            "Kind": Question.Kind,
            "participant": participant,
        },
    )
