from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from apps.core.http import AuthedRequest
from apps.core.models import Role
from apps.core.permissions import role_in
from apps.core.registry import panels_for
from apps.core.selectors import course_get, membership_list


@login_required
def home(request: AuthedRequest) -> HttpResponse:
    """One course → straight to its dashboard; several → pick one; none → say so."""
    memberships = list(membership_list(user=request.user))
    if len(memberships) == 1:
        return redirect("core:dashboard", code=memberships[0].course.code)
    return render(request, "core/home.html", {"memberships": memberships})


@login_required
def dashboard(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_get(user=request.user, code=code)
    request.course = course
    role = role_in(request.user, course)
    assert role is not None  # course_get already refused non-members  # noqa: S101
    panels = [{"panel": p, "ctx": p.context(request, course, role)} for p in panels_for(Role(role))]
    return render(
        request,
        "core/dashboard.html",
        {"course": course, "role": role, "panels": panels},
    )
