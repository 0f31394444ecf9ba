from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q, QuerySet
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.core.csvexport import SafeWriter
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.lockout import locked_accounts
from apps.core.models import Course, Membership, Role
from apps.core.services import account_unlock
from apps.core.views_helpers import course_for
from apps.roster.models import RosterImport
from apps.roster.rules import MAX_BYTES
from apps.roster.services import (
    roster_commit,
    roster_import_get,
    roster_preview,
    roster_upload,
    staff_leaving,
)

PAGE = 100


class UploadForm(forms.Form):
    file = forms.FileField(
        label="Class list (CSV)",
        help_text="Columns name, email, sid, role — or a Canvas/bCourses roster export as it is. "
        "You will see a preview before anything changes.",
    )


def _members(request: AuthedRequest, course: Course) -> QuerySet[Membership]:
    qs = (
        Membership.objects.filter(course=course)
        .select_related("user")
        .order_by("role", "user__full_name")
    )
    role = request.GET.get("role", "")
    if role in Role.values:
        qs = qs.filter(role=role)
    status = request.GET.get("status", "active")
    if status == "active":
        qs = qs.filter(is_active=True)
    elif status == "dropped":
        qs = qs.filter(is_active=False)
    q = request.GET.get("q", "").strip()
    if q:
        qs = qs.filter(
            Q(user__full_name__icontains=q)
            | Q(user__email__icontains=q)
            | Q(user__sid__icontains=q)
        )
    return qs


@login_required
def page(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    form = UploadForm()
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            if upload.size > MAX_BYTES:
                form.add_error("file", f"The file is larger than {MAX_BYTES // 1024 // 1024} MB.")
            else:
                try:
                    record, _ = roster_upload(
                        actor=request.user, course=course, filename=upload.name, data=upload.read()
                    )
                except DomainError as exc:
                    form.add_error("file", exc.message)
                else:
                    return redirect("roster:preview", code=code, import_id=record.pk)
    members = _members(request, course)
    try:
        page_no = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page_no = 1
    total = members.count()
    locked = locked_accounts()  # any account; this course's members are kept just below
    locked_people = (
        [
            (m, locked[m.user.email.lower()])
            for m in Membership.objects.filter(
                course=course, user__email__in=list(locked)
            ).select_related("user")
            if m.user.email.lower() in locked
        ]
        if locked
        else []
    )
    return render(
        request,
        "roster/page.html",
        {
            "locked_people": locked_people,
            "course": course,
            "form": form,
            "members": members[(page_no - 1) * PAGE : page_no * PAGE],
            "total": total,
            "page_no": page_no,
            "pages": max(1, -(-total // PAGE)),
            "imports": RosterImport.objects.filter(course=course).select_related("uploaded_by")[
                :10
            ],
            "filters": {
                "role": request.GET.get("role", ""),
                "status": request.GET.get("status", "active"),
                "q": request.GET.get("q", ""),
            },
            "roles": Role.choices,
        },
    )


@login_required
@require_POST
def unlock(request: AuthedRequest, code: str, user_id: int) -> HttpResponse:
    """Staff lift a log-in lock-out from a member of the course (audited)."""
    course = course_for(request, code, staff=True)
    try:
        person = account_unlock(actor=request.user, course=course, user_id=user_id)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{person.get_full_name()} can log in again.")
    return redirect("roster:page", code=code)


@login_required
def preview(request: AuthedRequest, code: str, import_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    try:
        record = roster_import_get(actor=request.user, course=course, import_id=import_id)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("roster:page", code=code)
    if request.method == "POST":
        try:
            result = roster_commit(actor=request.user, record=record)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("roster:preview", code=code, import_id=import_id)
        s = result.summary()
        messages.success(
            request,
            f"Roster imported: {s['added']} added, {s['updated']} updated, {s['dropped']} dropped, "
            f"{s['unchanged']} unchanged.",
        )
        return redirect("roster:page", code=code)
    plan = roster_preview(course=course, data=bytes(record.content))
    students = Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count()
    return render(
        request,
        "roster/preview.html",
        {
            "course": course,
            "record": record,
            "plan": plan,
            "summary": plan.summary(),
            "many_dropped": students and len(plan.dropped) > max(5, students // 5),
            "leaving": staff_leaving(course, plan) if plan.ok and not record.committed_at else [],
        },
    )


@login_required
def export(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{course.code}-roster.csv"'
    writer = SafeWriter(response)
    writer.writerow(["name", "email", "sid", "role", "status"])
    for m in _members(request, course):
        writer.writerow(
            [
                m.user.full_name,
                m.user.email,
                m.user.sid,
                m.role,
                "active" if m.is_active else "dropped",
            ]
        )
    return response
