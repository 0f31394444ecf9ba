"""The course's LMS page (staff): its linked LMS courses, the roster sync (previewed on the roster
page like a CSV import) and the grade push, with every failed person named and a retry."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.views_helpers import course_action, course_for
from apps.lti import sync
from apps.lti.models import LtiLink, LtiSync


@login_required
@require_GET
def lms_page(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    syncs = LtiSync.objects.filter(link__course=course).select_related("link", "started_by")
    return render(
        request,
        "lti/lms.html",
        {
            "course": course,
            "links": LtiLink.objects.filter(course=course).select_related("tool", "linked_by"),
            "page": Paginator(syncs, 20).get_page(request.GET.get("page")),
            "config_url": settings.SITE_URL.rstrip("/") + reverse("lti:config"),
        },
    )


@course_action(staff=True)
def roster_sync(request: AuthedRequest, course: Course) -> HttpResponse:
    """Fetch the LMS roster and show its preview (added, updated, dropped) to confirm."""
    try:
        record, plan = sync.roster_sync(actor=request.user, course=course)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("lti:lms", code=course.code)
    s = plan.summary()
    messages.info(
        request,
        f"The LMS roster: {s['added']} to add, {s['updated']} to update, {s['dropped']} to drop. "
        "Nothing changes until you confirm below.",
    )
    return redirect("roster:preview", code=course.code, import_id=record.pk)


@course_action(staff=True)
def grades_push(request: AuthedRequest, course: Course) -> HttpResponse:
    """Send every changed score to each linked LMS course; failures are listed on the page."""
    try:
        done = sync.grades_push(actor=request.user, course=course)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("lti:lms", code=course.code)
    for s in done:
        title = s.link.context_title or s.link.context_id
        counts = s.summary
        if s.status == LtiSync.Status.DONE:
            messages.success(
                request,
                f"{title}: {counts.get('sent', 0)} score(s) sent, "
                f"{counts.get('unchanged', 0)} unchanged.",
            )
        else:
            messages.error(
                request,
                f"{title}: {len(s.failures)} not sent (listed below); "
                f"{counts.get('sent', 0)} sent. Push again to retry them.",
            )
    return redirect("lti:lms", code=course.code)
