"""The extension requests page: a student asks (and sees every request of theirs with staff's
answer); staff work the queue oldest first, each request beside the student's slack, their
earlier requests and their deadline as it stands, and download the list shown as CSV
(`?format=csv`). Every change posts to its own action view."""

from __future__ import annotations

import itertools
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.core.validators import MaxValueValidator
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.calendar.cache import course_calendar
from apps.calendar.models import Assignment, Milestone
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant
from apps.core.views_helpers import course_action, course_for, errors_as_messages, int_or_none
from apps.extensions import services
from apps.extensions.models import ExtensionRequest
from apps.extensions.selectors import request_facts
from apps.groups.selectors import current_group_id

PAGE = 25
STATUSES = {"open", "approved", "declined", "closed", ""}


def _targets(course: Course, in_group: bool) -> list[tuple[str, str]]:
    now = timezone.now()
    out = [("", "Choose an assignment or milestone" if in_group else "Choose an assignment")]
    out += [
        (f"a{a.pk}", f"{a.code} {a.title}")
        for a in Assignment.objects.filter(course=course, release_at__lte=now).order_by("due_at")
    ]
    if not in_group:  # milestones and group extensions are the group's; none to offer
        return out
    out += [
        (f"m{m.pk}", f"Milestone: {m.name} (your group)")
        for m in Milestone.objects.filter(course=course, tracked=True).order_by("due_at")
    ]
    return out


class AskForm(forms.Form):
    target = forms.ChoiceField(
        label="Assignment or milestone",
        help_text="The assignment or your group's milestone whose deadline you need moved.",
    )
    days = forms.IntegerField(
        min_value=1,
        help_text="Days after your current deadline (slack days and extensions included).",
    )
    for_group = forms.BooleanField(
        required=False,
        label="For my whole group",
        help_text="Group work: the extension moves every member's deadline. Milestones are "
        "always for the group.",
    )
    dsp = forms.BooleanField(
        required=False,
        label="This is a DSP accommodation",
        help_text="A disability accommodation beyond the standing one on file with staff.",
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=2000,
        help_text="Why you need the time, in a sentence or two. Only staff read it.",
    )
    document = forms.FileField(
        required=False,
        label="Supporting document (optional)",
        help_text="A PDF, PNG or JPEG of at most 5 MB, e.g. a doctor's note. Only staff see it.",
    )

    def __init__(self, *args: object, course: Course, in_group: bool, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["target"].choices = _targets(course, in_group)  # type: ignore[attr-defined]
        if not in_group:
            del self.fields["for_group"]
            self.fields["target"].label = "Assignment"
            self.fields["target"].help_text = "The assignment whose deadline you need moved."
        self.fields["days"].validators.append(MaxValueValidator(course.extension_max_days))
        self.fields["days"].widget.attrs["max"] = course.extension_max_days


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _staff(request, course)
    return _student(request, course, AskForm(course=course, in_group=_in_group(request, course)))


def _in_group(request: AuthedRequest, course: Course) -> bool:
    return current_group_id(course=course, user=request.user) is not None


def _student(request: AuthedRequest, course: Course, form: AskForm) -> HttpResponseBase:
    mine = (
        ExtensionRequest.objects.filter(course=course, student=request.user)
        .select_related("assignment", "milestone", "group", "decided_by")
        .order_by("-created_at")
    )
    rows = Paginator(mine, PAGE).get_page(request.GET.get("page"))
    rule = course.extension_auto_max_days and course.extension_auto_per_student
    from apps.slackdays.selectors import student_slack

    now = timezone.now()
    deadlines = [
        d
        for d in student_slack(course=course, student=request.user)[1]
        if d.assignment.release_at <= now
    ]
    return render(
        request,
        "extensions/student.html",
        {"course": course, "form": form, "page": rows, "rule": rule, "deadlines": deadlines},
        status=400 if form.errors else 200,
    )


def _staff(request: AuthedRequest, course: Course) -> HttpResponseBase:
    status = request.GET.get("status", "open")
    status = status if status in STATUSES else "open"
    rows = ExtensionRequest.objects.filter(course=course).select_related(
        "student", "assignment", "milestone", "group", "decided_by"
    )
    if status:
        rows = rows.filter(status=status)
    if request.GET.get("format") == "csv":
        return _staff_csv(course, status, rows)
    page_ = Paginator(rows.order_by("created_at", "pk"), PAGE).get_page(request.GET.get("page"))
    students = {r.student_id for r in page_}
    earlier: dict[int, list[ExtensionRequest]] = {}
    for e in (
        ExtensionRequest.objects.filter(course=course, student_id__in=students)
        .select_related("assignment", "milestone")
        .order_by("created_at")
    ):
        earlier.setdefault(e.student_id, []).append(e)
    facts = request_facts(course=course, rows=page_)  # 4 queries for the page
    cards = [
        {
            "r": r,
            "slack_left": facts[r.pk].slack_left,
            "earlier": [e for e in earlier.get(r.student_id, []) if e.pk != r.pk],
            "deadline": facts[r.pk].deadline,
            "stack": facts[r.pk].stack,
        }
        for r in page_
    ]
    return render(
        request,
        "extensions/staff.html",
        {
            "course": course,
            "cards": cards,
            "page": page_,
            "status": status,
            "assignments": course_calendar(course).assignments,
        },
    )


def _staff_csv(course: Course, status: str, rows: Any) -> HttpResponseBase:
    """The requests of one tab, oldest first, times in course time with the zone named. Reasons
    and documents stay in the app: a spreadsheet copy of a medical note is one more to lose."""
    when = course.timezone
    lines = (
        [
            format_instant(r.created_at, when),
            r.student.email,
            r.student.get_full_name(),
            r.group.name if r.group else "",
            r.target_name,
            r.days,
            "yes" if r.dsp else "",
            r.get_status_display(),
            "" if r.approved_days is None else r.approved_days,
            "rule" if r.auto else (r.decided_by.email if r.decided_by else ""),
            format_instant(r.decided_at, when) if r.decided_at else "",
            r.comment,
        ]
        for r in rows.order_by("created_at", "pk").iterator(chunk_size=500)
    )
    header = ["asked", "email", "name", "group", "for", "days asked", "DSP", "status"]
    header += ["days granted", "decided by", "decided", "comment to the student"]
    return csv_response(
        f"{course.code}-extension-requests-{status or 'all'}.csv",
        itertools.chain([header], lines),
    )


@course_action(student=True)
def ask(request: AuthedRequest, course: Course) -> HttpResponseBase:
    form = AskForm(request.POST, request.FILES, course=course, in_group=_in_group(request, course))
    if not form.is_valid():
        return _student(request, course, form)
    d = form.cleaned_data
    target = d["target"]
    upload = d.get("document")
    try:
        r = services.request_create(
            actor=request.user,
            course=course,
            days=d["days"],
            reason=d["reason"],
            assignment_id=int(target[1:]) if target.startswith("a") else None,
            milestone_id=int(target[1:]) if target.startswith("m") else None,
            for_group=d.get("for_group", False),
            dsp=d["dsp"],
            document=upload.read(services.MAX_DOCUMENT_BYTES + 1) if upload else None,
        )
    except DomainError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        return _student(request, course, form)
    if r.status == ExtensionRequest.Status.APPROVED:
        messages.success(
            request,
            f"Approved at once by the course's rule: {r.approved_days} more day(s) on "
            f"{r.target_name}. Your deadlines, calendar and reminders now show it.",
        )
    else:
        messages.success(request, "Request sent; staff will answer it and you will get an e-mail.")
    return redirect("extensions:page", code=course.code)


@course_action(student=True)
def withdraw(request: AuthedRequest, course: Course, request_id: int) -> HttpResponseBase:
    with errors_as_messages(request):
        services.withdraw(actor=request.user, course=course, request_id=request_id)
        messages.success(request, "Request withdrawn.")
    return redirect("extensions:page", code=course.code)


def _decide(
    request: AuthedRequest, course: Course, request_id: int, *, approve: bool
) -> HttpResponseBase:
    with errors_as_messages(request):
        raw = request.POST.get("days", "").strip()
        days = int_or_none(raw)
        if approve and raw and days is None:
            raise DomainError(f"{raw!r} is not a whole number of days.", field="days")
        r = services.decide(
            actor=request.user,
            course=course,
            request_id=request_id,
            approve=approve,
            days=days,
            comment=request.POST.get("comment", ""),
            over_cap=request.POST.get("over_cap") == "1",
        )
        messages.success(request, f"{r.student}: {r.get_status_display().lower()}; e-mailed.")
    back = request.POST.get("status", "open")
    return redirect(f"/c/{course.code}/extensions/?status={back if back in STATUSES else 'open'}")


@course_action(staff=True)
def approve(request: AuthedRequest, course: Course, request_id: int) -> HttpResponseBase:
    return _decide(request, course, request_id, approve=True)


@course_action(staff=True)
def decline(request: AuthedRequest, course: Course, request_id: int) -> HttpResponseBase:
    return _decide(request, course, request_id, approve=False)


@login_required
@require_GET
def document(request: AuthedRequest, code: str, request_id: int) -> HttpResponseBase:
    """The supporting document: to staff and to the student who sent it, nobody else."""
    course = course_for(request, code)
    r = ExtensionRequest.objects.filter(course=course, pk=request_id).first()
    if r is None or not r.document_kind or r.document is None:
        raise Http404("No such document.")
    if not (is_staff(request.user, course) or r.student_id == request.user.pk):
        raise Http404("No such document.")
    types = {"pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg"}
    answer = HttpResponse(bytes(r.document), content_type=types[r.document_kind])
    name = f"extension-request-{r.pk}.{r.document_kind}"
    answer["Content-Disposition"] = f'attachment; filename="{name}"'
    return answer
