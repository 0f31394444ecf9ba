from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from apps.core.http import AuthedRequest
from apps.core.invariants import checks, run_checks
from apps.core.models import Course, Role
from apps.core.permissions import role_in
from apps.core.registry import Panel, TodayItem, panels_for, today_merge, today_sources
from apps.core.selectors import course_get, membership_list
from apps.core.todaycache import student_kept, today_labels
from apps.core.views_helpers import course_for


@login_required
def home(request: AuthedRequest) -> HttpResponse:
    """One course → straight to its dashboard; several → pick one; none → say so."""
    memberships = list(membership_list(user=request.user))
    if len(memberships) == 1:
        return redirect("core:dashboard", code=memberships[0].course.code)
    return render(request, "core/home.html", {"memberships": memberships})


@login_required
@require_GET
def dashboard(request: AuthedRequest, code: str) -> HttpResponse:
    """Today: what the person must do this week (students) or decide (staff), collected from
    every app's Today source, each thing once (`today_merge`), then the dashboard panels."""
    course = course_get(user=request.user, code=code)
    request.course = course
    role = role_in(request.user, course)
    assert role is not None  # course_get already refused non-members  # noqa: S101
    now = timezone.now()

    def build() -> list[TodayItem]:
        return today_merge(
            item
            for source in today_sources(Role(role))
            for item in source.items(request, course, Role(role), now)
        )

    as_role = Role(role)
    kept: dict[str, SafeString | None] = {}
    if role == Role.STUDENT:
        # A student's list and each panel that says what it reads are kept, rendered, between
        # the writes that could change them, all read in one round trip (apps.core.todaycache).
        cached = [p for p in panels_for(as_role) if p.read_labels()]
        items, *html = student_kept(
            course,
            request.user.pk,
            now,
            [
                ("items", today_labels(), build),
                *(
                    (
                        f"panel:{p.key}",
                        p.read_labels(),
                        partial(_panel_html, p, request, course, role, now),
                    )
                    for p in cached
                ),
            ],
        )
        kept = {p.key: h for p, h in zip(cached, html, strict=True)}
        todo = list(items)
        todo.sort(key=lambda i: (i.when or now, i.title))  # the overdue and the soonest first
    else:
        todo = build()
        todo.sort(key=lambda i: (not i.urgent, i.when or now, i.title))  # decisions lead
    # A panel whose context is None has nothing to show now (e.g. check-in outside lectures).
    panels: list[dict[str, Any]] = []
    for p in panels_for(as_role):
        if p.key in kept:
            if (shown := kept[p.key]) is not None:
                panels.append({"panel": p, "html": shown})
        elif (ctx := p.context(request, course, role)) is not None:
            panels.append({"panel": p, "ctx": ctx})
    return render(
        request,
        "core/dashboard.html",
        {"course": course, "role": role, "panels": panels, "todo": todo, "now": now},
    )


def _panel_html(
    panel: Panel, request: AuthedRequest, course: Course, role: str, now: dt.datetime
) -> SafeString | None:
    """The panel's HTML (None: nothing to show now), from its template alone: a kept panel
    uses only its context, the course, the role and the time, never the request's."""
    ctx = panel.context(request, course, role)  # type: ignore[arg-type]
    if ctx is None:
        return None
    html = render_to_string(
        panel.template, {"ctx": ctx, "course": course, "role": role, "now": now}
    )
    return mark_safe(html)


@login_required
@require_GET
def course_help(request: AuthedRequest, code: str) -> HttpResponse:
    """Where everything is (the menu, section by section), the course's links and the rules
    people ask about most: slack days, groups, scribing, reminders."""
    course = course_get(user=request.user, code=code)
    request.course = course
    return render(request, "core/help.html", {"course": course})


@login_required
@require_GET
def course_check(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: every invariant of the course, checked now (what `manage.py check_course` runs),
    each violation with the objects named."""
    course = course_for(request, code, staff=True)
    found = run_checks(course.pk)
    rows = [
        {"name": name, "violations": [v.detail for v in found if v.check == name]}
        for name in checks()
    ]
    return render(
        request,
        "core/check.html",
        {"course": course, "rows": rows, "total": len(found)},
    )


@login_required
@require_GET
def course_jobs(request: AuthedRequest, code: str) -> HttpResponse:
    """Staff: the course's background jobs that are queued, running, stuck or recently failed,
    with their age, from every app that runs work on a worker (apps.core.jobs)."""
    from django.utils import timezone

    from apps.core.jobs import jobs

    course = course_for(request, code, staff=True)
    now = timezone.now()
    found = jobs(course.pk)
    rows = [{"job": j, "age": now - j.since} for j in found]
    return render(
        request,
        "core/jobs.html",
        {
            "course": course,
            "rows": rows,
            "stuck": sum(1 for j in found if j.status == "stuck"),
            "failed": sum(1 for j in found if j.status == "failed"),
        },
    )
