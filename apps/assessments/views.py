"""Assessment pages. Staff: create an assessment, open each form for a window, import a CSV per
administration (preview with every problem by row and column, then store all or nothing), the
report with its pictures, exports (de-identified CSV, JSON summary), publish, destroy the ID map.
Students: the timed form (consent first) and their own scores; the report once published."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.assessments import charts, report, services, study
from apps.assessments.models import (
    EXPERIENCE,
    PRIOR,
    PROGRAMS,
    Administration,
    Assessment,
    IdentityLink,
    Response,
    ResponseImport,
    TimeAccommodation,
)
from apps.autograder.models import Question, QuestionSet
from apps.calendar.views import local_to_utc
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.permissions import is_instructor, is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages
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
            "extended": TimeAccommodation.objects.filter(course=course)
            .select_related("student")
            .order_by("student__full_name")
            if staff
            else [],
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
@require_GET
def detail(request: AuthedRequest, code: str, assessment_id: int) -> HttpResponseBase:
    """The report (staff; students once published), windows, imports and the ID map; every
    change posts to its own action view below."""
    course = course_for(request, code)
    user: User = request.user
    a = services.get(course, assessment_id)
    staff = is_staff(user, course)
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
    ctx["purge_at"] = study.purge_at(course)
    if staff:
        ctx["demographics"] = study.demographics_summary(a)
        ctx["imports"] = ResponseImport.objects.filter(assessment=a).defer("data")[:10]
        ctx["shown_import"] = (
            ResponseImport.objects.filter(assessment=a, pk=_int(request.GET.get("import")) or 0)
            .defer("data")
            .first()
        )
        ctx["links"] = a.participants.filter(identity__isnull=False).count()
    else:
        ctx["mine"] = services.own_responses(a, user)
        ctx["may_describe"] = study.consented(a, user) and not a.identities_destroyed_at
        ctx["questions"] = {q.key: q for q in services.questions_of(a)}
    return render(request, "assessments/detail.html", ctx)


def _to_detail(course: Course, a: Assessment, suffix: str = "") -> HttpResponseBase:
    return redirect(f"/c/{course.code}/assessments/{a.pk}/{suffix}")


@course_action(staff=True)
def window_set(request: AuthedRequest, course: Course, assessment_id: int) -> HttpResponseBase:
    """Staff set when the pre or post form opens and closes, in course time."""
    a = services.get(course, assessment_id)
    with errors_as_messages(request):
        phase = request.POST.get("phase", "")
        services.window_set(
            actor=request.user,
            course=course,
            assessment_id=a.pk,
            phase=phase,
            opens_at=_when(request.POST.get("opens_at", ""), course, "opens"),
            closes_at=_when(request.POST.get("closes_at", ""), course, "closes"),
        )
        messages.success(request, f"The {phase} form's window is saved.")
    return _to_detail(course, a)


@course_action(staff=True)
def import_preview(request: AuthedRequest, course: Course, assessment_id: int) -> HttpResponseBase:
    """Staff upload a CSV of responses; the preview names every problem before anything is
    stored."""
    a = services.get(course, assessment_id)
    suffix = ""
    with errors_as_messages(request):
        f = request.FILES.get("file")
        if f is None:
            raise DomainError("Choose a CSV file.", field="file")
        imp = services.import_preview(
            actor=request.user,
            course=course,
            assessment_id=a.pk,
            phase=request.POST.get("phase", ""),
            filename=f.name or "upload.csv",
            data=f.read(services.MAX_UPLOAD + 1),
        )
        suffix = f"?import={imp.pk}#import"
    return _to_detail(course, a, suffix)


@course_action(staff=True)
def import_commit(
    request: AuthedRequest, course: Course, assessment_id: int, batch_id: int
) -> HttpResponseBase:
    """Staff store a previewed import, all rows or none."""
    a = services.get(course, assessment_id)
    with errors_as_messages(request):
        imp = services.import_commit(
            actor=request.user, course=course, assessment_id=a.pk, import_id=batch_id
        )
        rows = imp.report.get("rows", 0)
        messages.success(request, f"Stored {rows} {imp.phase} responses from {imp.filename}.")
    return _to_detail(course, a)


def _publish(
    request: AuthedRequest, course: Course, assessment_id: int, *, published: bool
) -> HttpResponseBase:
    a = services.get(course, assessment_id)
    with errors_as_messages(request):
        services.publish(actor=request.user, course=course, assessment_id=a.pk, published=published)
        messages.success(
            request,
            "Report published to students." if published else "Report hidden from students.",
        )
    return _to_detail(course, a)


@course_action(staff=True)
def report_publish(request: AuthedRequest, course: Course, assessment_id: int) -> HttpResponseBase:
    """Staff show the de-identified report to students."""
    return _publish(request, course, assessment_id, published=True)


@course_action(staff=True)
def report_unpublish(
    request: AuthedRequest, course: Course, assessment_id: int
) -> HttpResponseBase:
    """Staff hide the report from students again."""
    return _publish(request, course, assessment_id, published=False)


@course_action(staff=True)
def identities_destroy(
    request: AuthedRequest, course: Course, assessment_id: int
) -> HttpResponseBase:
    """Staff destroy the participant-ID → student map for good, after confirming."""
    a = services.get(course, assessment_id)
    with errors_as_messages(request):
        n = services.identities_destroy(
            actor=request.user,
            course=course,
            assessment_id=a.pk,
            confirm=request.POST.get("confirm") == "yes",
        )
        messages.success(
            request, f"The ID map is destroyed ({n} links). Scores and the report are unchanged."
        )
    return _to_detail(course, a)


def _phase(request: AuthedRequest) -> str:
    phase = request.GET.get("phase") or request.POST.get("phase") or "pre"
    return phase if phase in Administration.Phase.values else "pre"


def _take_url(course: Course, a: Assessment, phase: str) -> str:
    return f"/c/{course.code}/assessments/{a.pk}/take/?phase={phase}"


@course_action(student=True)
def take_start(request: AuthedRequest, course: Course, assessment_id: int) -> HttpResponseBase:
    """A student accepts the notice (and chooses about research use); the clock starts."""
    a = services.get(course, assessment_id)
    phase = _phase(request)
    with errors_as_messages(request):
        services.form_start(
            actor=request.user,
            course=course,
            assessment_id=a.pk,
            phase=phase,
            consent=request.POST.get("consent") == "on",
            no_research=request.POST.get("no_research") == "on",
        )
    return redirect(_take_url(course, a, phase))


@course_action(student=True)
def take_submit(request: AuthedRequest, course: Course, assessment_id: int) -> HttpResponseBase:
    """A student hands in the answers; the server refuses them after the student's own limit."""
    a = services.get(course, assessment_id)
    phase = _phase(request)
    questions = services.questions_of(a)
    try:
        r = services.form_submit(
            actor=request.user,
            course=course,
            assessment_id=a.pk,
            phase=phase,
            answers=services.answers_from_post(questions, request.POST),
        )
    except DomainError as exc:
        messages.error(request, exc.message, extra_tags=f"refused-{exc.code}")
        return redirect(_take_url(course, a, phase))
    points = sum(q.points for q in questions)
    messages.success(request, f"Recorded: {r.total:g} of {points:g} points.")
    return redirect("assessments:detail", code=course.code, assessment_id=a.pk)


@login_required
@require_GET
def take(request: AuthedRequest, code: str, assessment_id: int) -> HttpResponseBase:
    """The timed form: the notice and consent first; the clock runs on the server from then."""
    course = course_for(request, code)
    user: User = request.user
    a = services.get(course, assessment_id)
    phase = _phase(request)
    questions = services.questions_of(a)
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
            "minutes": services.limit_minutes(response)
            if started and response
            else services.limit_for(a, user) / 60,
            "extended": services.limit_for(a, user) != a.time_limit_minutes * 60,
            "questions": [(q, list(range(max(len(q.parts), 1)))) for q in questions],
            "Kind": Question.Kind,
            "participant": participant,
        },
    )


@course_action(staff=True)
def extended_time(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff give a student extended time on timed assessments (×1 and +0 removes it)."""
    with errors_as_messages(request):
        try:
            multiplier = float(request.POST.get("multiplier", "1") or "1")
        except ValueError:
            raise DomainError(
                "The multiplier is a number such as 1.5.", field="multiplier"
            ) from None
        acc = services.accommodation_set(
            actor=request.user,
            course=course,
            email=request.POST.get("email", ""),
            multiplier=multiplier,
            extra_minutes=_int(request.POST.get("extra_minutes")) or 0,
            note=request.POST.get("note", ""),
        )
        messages.success(
            request,
            "Extended time removed."
            if acc is None
            else f"{acc.student}: ×{acc.multiplier:g} + {acc.extra_minutes} min on timed quizzes "
            "started from now on.",
        )
    return redirect("assessments:list", code=course.code)


class DemographicsForm(forms.Form):
    program = forms.ChoiceField(
        choices=PROGRAMS,
        required=False,
        widget=forms.RadioSelect,
        help_text="Which programme you are in.",
    )
    experience = forms.ChoiceField(
        choices=EXPERIENCE,
        required=False,
        widget=forms.RadioSelect,
        label="ML-systems experience",
        help_text="Years building or running ML systems (work or research).",
    )
    prior_course = forms.ChoiceField(
        choices=PRIOR,
        required=False,
        widget=forms.RadioSelect,
        label="Took a systems or ML course before",
        help_text="Any earlier course in computer systems or machine learning.",
    )


@login_required
def demographics(request: AuthedRequest, code: str, assessment_id: int) -> HttpResponseBase:
    """The study's separate, voluntary demographics form (students who gave research consent).
    Stored under the participant ID only; every answer may be "Prefer not to say"."""
    course = course_for(request, code)
    a = services.get(course, assessment_id)
    user: User = request.user
    participant = services.participant_for(a, user, create=False)
    existing = getattr(participant, "demographics", None) if participant else None
    form = DemographicsForm(
        initial={f: getattr(existing, f) for f in study.FIELDS} if existing else None
    )
    if request.method == "POST":
        if is_staff(user, course):
            raise PermissionDenied("Only students fill in the study's demographics form.")
        form = DemographicsForm(request.POST)
        if form.is_valid():
            try:
                study.demographics_submit(
                    actor=user, course=course, assessment_id=a.pk, data=form.cleaned_data
                )
            except DomainError as exc:
                if exc.field in form.fields:
                    form.add_error(exc.field, exc.message)
                else:
                    messages.error(request, exc.message)
            else:
                messages.success(request, "Thank you: saved under your participant ID only.")
                return _to_detail(course, a)
    return render(
        request,
        "assessments/demographics.html",
        {
            "course": course,
            "a": a,
            "form": form,
            "may": study.consented(a, user) and not a.identities_destroyed_at,
            "existing": existing,
        },
    )
