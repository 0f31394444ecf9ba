from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.core.compiled import compiled_query
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, Membership, Role
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages, int_or_none
from apps.groups.models import Group, GroupMembership
from apps.groups.selectors import current_group_id_remember
from apps.slackdays import services
from apps.slackdays.models import LateWork, LedgerEntry
from apps.slackdays.selectors import (
    balance_page,
    balance_rows,
    exception_list,
    ledger_list,
    ledger_of,
    student_slack_memo,
)


def _my_group_members(course_id: int, user_id: int) -> QuerySet[GroupMembership]:
    return (
        GroupMembership.objects.filter(
            course_id=course_id,
            left_at__isnull=True,
            group__memberships__user_id=user_id,
            group__memberships__left_at__isnull=True,
        )
        .select_related("user")
        .order_by("joined_at", "pk")
    )


def _ledger_first_page(course_id: int, student_id: int) -> QuerySet[LedgerEntry]:
    """The newest 50 entries (the whole ledger is on the API)."""
    return ledger_of(course_id, student_id)[:50]


@login_required
@require_GET
def mine(request: AuthedRequest, code: str) -> HttpResponse:
    """A student's balance, effective deadlines and ledger; apply and cancel post below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        return redirect("slackdays:staff", code=code)
    # My group's current members in one query (the group itself is not needed); it also tells
    # the slack read which group's exceptions count.
    current = compiled_query("slack.page.members", _my_group_members, course.pk, request.user.pk)
    members = [m.user.get_full_name() for m in current] or [request.user.get_full_name()]
    memo: dict[str, Any] = {}
    current_group_id_remember(
        memo, course=course, user=request.user, group_id=current[0].group_id if current else None
    )
    account_left, rows = student_slack_memo(memo, course=course, student=request.user)
    return render(
        request,
        "slackdays/mine.html",
        {
            "course": course,
            "rows": rows,
            "left": account_left,
            "boxes": [i < account_left for i in range(course.slack_days_allowance)],
            "members": members,
            "ledger": compiled_query(
                "slack.page.ledger", _ledger_first_page, course.pk, request.user.pk
            ),
        },
    )


@login_required
@require_GET
def staff(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Staff: balances (CSV), exceptions, late work; each change posts to its own view."""
    course = course_for(request, code, staff=True)
    q, low = request.GET.get("q", "").strip(), request.GET.get("balance", "")
    rows = balance_rows(course=course, q=q, balance=int(low) if low.isdigit() else None)
    if request.GET.get("format") == "csv":
        header = ["name", "email", "sid", "group", "balance", "allowance", "used_on"]
        body = (
            [
                r.student.get_full_name(),
                r.student.email,
                r.student.sid,
                r.group,
                r.balance,
                r.allowance,
                " ".join(r.used),
            ]
            for chunk in _chunks(rows.iterator(chunk_size=500), 500)
            for r in balance_page(chunk, course)
        )
        return csv_response(f"{course.code}-slack.csv", itertools.chain([header], body))
    from apps.calendar.models import Assignment

    page = Paginator(rows, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "slackdays/staff.html",
        {
            "course": course,
            "page": page,
            "rows": balance_page(page, course),
            "q": request.GET.get("q", ""),
            "balance": low,
            "ledger": ledger_list(user=request.user, course=course)[:30],
            "exceptions": Paginator(
                exception_list(user=request.user, course=course).order_by("-created_at", "-id"), 20
            ).get_page(request.GET.get("epage")),
            "late": Paginator(
                LateWork.objects.filter(course=course)
                .select_related("student", "assignment")
                .order_by("-submitted_at", "-id"),
                20,
            ).get_page(request.GET.get("lpage")),
            "assignments": Assignment.objects.filter(course=course),
            "group_names": Group.objects.filter(course=course, dissolved_at__isnull=True)
            .order_by("name")
            .values_list("name", flat=True),
            "late_statuses": LateWork.Status.choices,
        },
    )


PAGE = 50


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# ------------------------------------------------------------------ student actions


def _assignment_id(request: AuthedRequest) -> int:
    value = int_or_none(request.POST.get("assignment"))
    if value is None:
        raise DomainError("Choose an assignment.", field="assignment")
    return value


@course_action(student=True)
def slack_apply(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A student spends a slack day on an assignment for the whole group, all or nothing."""
    with errors_as_messages(request):
        entries = services.slack_apply(
            actor=request.user, course=course, assignment_id=_assignment_id(request)
        )
        n = len(entries)
        messages.success(
            request, f"Slack day applied for {n} member{'s' if n != 1 else ''} of your group."
        )
    return redirect("slackdays:mine", code=course.code)


@course_action(student=True)
def slack_cancel(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A student takes a slack day back before the original deadline; every member is refunded."""
    with errors_as_messages(request):
        entries = services.slack_cancel(
            actor=request.user, course=course, assignment_id=_assignment_id(request)
        )
        messages.success(
            request, f"Slack day cancelled; {len(entries)} member(s) got their day back."
        )
    return redirect("slackdays:mine", code=course.code)


# ------------------------------------------------------------------ staff actions


def _whole(request: AuthedRequest, name: str, label: str) -> int:
    """A required whole number from the form, or a refusal naming the field."""
    value = int_or_none(request.POST.get(name, "").strip())
    if value is None:
        raise DomainError(f"Give the {label} as a whole number.", field=name)
    return value


def _student_id(request: AuthedRequest, course: Course) -> int:
    """The student the form names, by id or by course e-mail."""
    text = request.POST.get("student", "").strip()
    if text.isdigit():
        return int(text)
    found = _students_by_email(course, text)
    if len(found) != 1:
        raise DomainError("Name one student by their course e-mail.", field="student")
    return found[0]


@course_action(staff=True)
def exception_grant(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff grant an extension or accommodation to students or a whole group, with a reason."""
    p = request.POST
    with errors_as_messages(request):
        ids = [int(x) for x in p.getlist("students") if x.isdigit()]
        ids += _students_by_email(course, p.get("emails", ""))
        made = services.exception_grant(
            actor=request.user,
            course=course,
            kind=p.get("kind", ""),
            hours=_whole(request, "hours", "hours"),
            reason=p.get("reason", ""),
            assignment_id=int_or_none(p.get("assignment")),
            student_ids=ids,
            group_id=_group_by_name(course, p.get("group", "")),
            over_cap=p.get("over_cap") == "1",
        )
        messages.success(request, f"Granted {len(made)} exception(s).")
    return redirect("slackdays:staff", code=course.code)


@course_action(staff=True)
def exception_revoke(request: AuthedRequest, course: Course, exception_id: int) -> HttpResponseBase:
    """Staff revoke an exception; the deadlines it moved move back."""
    with errors_as_messages(request):
        services.exception_revoke(actor=request.user, course=course, exception_id=exception_id)
        messages.success(request, "Exception revoked.")
    return redirect("slackdays:staff", code=course.code)


@course_action(staff=True)
def slack_refund(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff give a student back the slack day spent on one assignment, with a reason."""
    with errors_as_messages(request):
        services.slack_refund(
            actor=request.user,
            course=course,
            student_id=_student_id(request, course),
            assignment_id=_assignment_id(request),
            reason=request.POST.get("reason", ""),
        )
        messages.success(request, "Slack day refunded.")
    return redirect("slackdays:staff", code=course.code)


@course_action(staff=True)
def slack_adjust(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff add or remove slack days from a student's balance, with a reason."""
    with errors_as_messages(request):
        services.slack_adjust(
            actor=request.user,
            course=course,
            student_id=_student_id(request, course),
            delta=_whole(request, "delta", "change in days"),
            reason=request.POST.get("reason", ""),
        )
        messages.success(request, "Balance adjusted.")
    return redirect("slackdays:staff", code=course.code)


@course_action(staff=True)
def late_work_decide(request: AuthedRequest, course: Course, late_id: int) -> HttpResponseBase:
    """Staff decide a late submission that slack did not cover (accept, penalise ...)."""
    with errors_as_messages(request):
        lw = services.late_work_decide(
            actor=request.user,
            course=course,
            late_work_id=late_id,
            status=request.POST.get("status", ""),
        )
        messages.success(
            request,
            f"{lw.student.get_full_name()}'s late {lw.assignment.code}: "
            f"{lw.get_status_display().lower()}.",
        )
    return redirect("slackdays:staff", code=course.code)


def _students_by_email(course: Course, text: str) -> list[int]:
    """Ids of the course's active students named by email (one per line, or separated by commas
    or spaces); an unknown address is an error naming it, so nothing is granted by half."""
    emails = {e.strip().lower() for e in text.replace(",", " ").split() if e.strip()}
    if not emails:
        return []
    found = dict(
        Membership.objects.filter(
            course=course, role=Role.STUDENT, is_active=True, user__email__in=emails
        ).values_list("user__email", "user_id")
    )
    missing = sorted(emails - {e.lower() for e in found})
    if missing:
        raise DomainError(f"Not a student of this course: {', '.join(missing)}.", field="emails")
    return list(found.values())


def _group_by_name(course: Course, text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        return int(text)
    gid = (
        Group.objects.filter(course=course, dissolved_at__isnull=True, name__iexact=text)
        .values_list("pk", flat=True)
        .first()
    )
    if gid is None:
        raise DomainError(f"There is no group called {text!r}.", field="group")
    return gid


class LatenessUploadForm(forms.Form):
    assignment = forms.TypedChoiceField(coerce=int, help_text="The assignment this export is for.")
    file = forms.FileField(
        label="Gradescope export (CSV)",
        help_text="Gradescope → assignment → Review Grades → Download Grades (CSV). Needs Email or "
        "SID and Submission Time.",
    )


@login_required
def lateness_import(
    request: AuthedRequest, code: str, import_id: int | None = None
) -> HttpResponse:
    """Upload → preview (nothing changes) → confirm (all or nothing)."""
    from apps.calendar.models import Assignment
    from apps.slackdays.lateness import lateness_run, lateness_upload
    from apps.slackdays.models import LatenessImport

    course = course_for(request, code, staff=True)
    choices = [(a.pk, f"{a.code} {a.title}") for a in Assignment.objects.filter(course=course)]
    if import_id is None:
        form = LatenessUploadForm(request.POST or None, request.FILES or None)
        form.fields["assignment"].choices = choices  # type: ignore[attr-defined]
        if request.method == "POST" and form.is_valid():
            try:
                record = lateness_upload(
                    actor=request.user,
                    course=course,
                    assignment_id=form.cleaned_data["assignment"],
                    filename=form.cleaned_data["file"].name,
                    data=form.cleaned_data["file"].read(),
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                return redirect("slackdays:import-preview", code=code, import_id=record.pk)
        return render(
            request,
            "slackdays/import.html",
            {
                "course": course,
                "form": form,
                "recent": LatenessImport.objects.filter(course=course).select_related("assignment")[
                    :10
                ],
            },
        )
    found = (
        LatenessImport.objects.filter(course=course, pk=import_id)
        .select_related("assignment")
        .first()
    )
    if found is None:
        raise Http404("No such import.")
    record = found
    if request.method == "POST":
        try:
            report = lateness_run(actor=request.user, record=record, commit=True)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("slackdays:import-preview", code=code, import_id=record.pk)
        s = report.summary()
        messages.success(
            request,
            f"Imported: {s.get('charged', 0)} slack day(s) charged, {s.get('late_not_covered', 0)} "
            "late not covered.",
        )
        return redirect("slackdays:staff", code=code)
    report = lateness_run(actor=request.user, record=record, commit=False)
    return render(
        request,
        "slackdays/import_preview.html",
        {"course": course, "record": record, "report": report, "summary": report.summary()},
    )
