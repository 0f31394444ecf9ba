"""The preflight page: the same table as `manage.py compute_preflight`, for staff, read-only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from apps.compute.cloud import preflight
from apps.compute.cloud.providers import is_live, provider_name
from apps.core.http import AuthedRequest
from apps.core.views_helpers import course_for


@login_required
@require_safe
def preflight_page(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: what in the course's GCP project would stop the term, each with its fix."""
    course = course_for(request, code, staff=True)
    report = preflight.run(course)
    return render(
        request,
        "compute/preflight.html",
        {
            "course": course,
            "report": report,
            "live": is_live(),
            "provider": provider_name(),
            "ok": preflight.OK,
        },
    )
