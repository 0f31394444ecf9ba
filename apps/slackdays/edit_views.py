"""Staff change an assignment's title, release and deadline (the calendar's shared edit flow:
the move's impact first, then confirm)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.urls import reverse

from apps.calendar.models import Assignment
from apps.calendar.views import course_datetime_field, deadline_edit, local_to_utc
from apps.core.http import AuthedRequest
from apps.core.views_helpers import course_for
from apps.slackdays.moves import assignment_move_impact, assignment_update


class AssignmentForm(forms.Form):
    title = forms.CharField(max_length=200, help_text="As students see it.")
    release_at = course_datetime_field("Released", "Course-local date and time it opens.")
    due_at = course_datetime_field(
        "Due (base deadline)",
        "Course-local date and time. Extensions and accommodations stay relative to it; slack days "
        "add to it.",
    )


@login_required
def assignment_edit(request: AuthedRequest, code: str, assignment_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    a = Assignment.objects.filter(course=course, pk=assignment_id).first()
    if a is None:
        raise Http404("No such assignment.")
    tz = course.tz
    initial = {
        "title": a.title,
        "release_at": a.release_at.astimezone(tz),
        "due_at": a.due_at.astimezone(tz),
    }
    form = AssignmentForm(request.POST or None, initial=initial)

    def save(cleaned: dict[str, Any], new_due: Any, confirm: bool) -> None:
        assignment_update(
            actor=request.user,
            course=course,
            assignment_id=a.pk,
            title=cleaned["title"],
            release_at=local_to_utc(cleaned["release_at"], tz),
            due_at=new_due,
            confirm=confirm,
        )

    return deadline_edit(
        request,
        course=course,
        form=form,
        what=f"{a.code} {a.title}",
        old_due=a.due_at,
        impact_of=lambda new_due: assignment_move_impact(
            course=course, assignment=a, new_due=new_due
        ),
        save=save,
        back=reverse("calendar:calendar", kwargs={"code": code}) + "?view=list",
    )
