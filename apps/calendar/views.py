from __future__ import annotations

import calendar as pycal
import datetime as dt
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.calendar import services
from apps.calendar.ical import feed_calendar
from apps.calendar.models import Lecture
from apps.calendar.registry import REMINDER_KINDS, Event
from apps.calendar.selectors import calendar_settings_get, event_list, feed_owner
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_member, is_staff
from apps.core.timefmt import COURSE_YEARS, OUT_OF_RANGE
from apps.core.views_helpers import course_action, course_for, errors_as_messages


@login_required
def schedule(request: AuthedRequest, code: str) -> HttpResponse:
    """The old whole-term page: now the calendar's list view."""
    course_for(request, code)
    return redirect(reverse("calendar:calendar", kwargs={"code": code}) + "?view=list")


def _month_arg(value: str | None, events: list[Event], today: dt.date, tz: Any) -> dt.date:
    """The month to show: ?month=YYYY-MM, else this month within the term, else the term's
    nearest end."""
    if value:
        try:
            year, month = (int(x) for x in value.split("-", 1))
            if 1900 <= year <= 2999:  # a sane range: the grid steps a month either way
                return dt.date(year, month, 1)
        except ValueError:
            pass
    if not events:
        return today.replace(day=1)
    first = events[0].start.astimezone(tz).date()
    last = max((e.end or e.start) for e in events).astimezone(tz).date()
    return min(max(today, first), last).replace(day=1)


def _month_grid(
    month: dt.date, events: list[Event], tz: Any, today: dt.date
) -> list[list[dict[str, Any]]]:
    by_day: dict[dt.date, list[Event]] = {}
    for e in events:
        start = e.start.astimezone(tz).date()
        last = (
            (e.end - dt.timedelta(seconds=1) if e.end and e.all_day else e.start)
            .astimezone(tz)
            .date()
        )
        day = start
        while day <= last:
            by_day.setdefault(day, []).append(e)
            day += dt.timedelta(days=1)
    weeks = pycal.Calendar(firstweekday=0).monthdatescalendar(month.year, month.month)
    return [
        [
            {
                "date": d,
                "events": by_day.get(d, []),
                "other": d.month != month.month,
                "today": d == today,
            }
            for d in week
        ]
        for week in weeks
    ]


class RemindersForm(forms.Form):
    kinds = forms.MultipleChoiceField(
        choices=list(REMINDER_KINDS.items()),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="E-mail me before",
        help_text="Reminders go out 48 h and 6 h before each of your own deadlines (the course's "
        "policy).",
    )


@login_required
@require_GET
def calendar_page(request: AuthedRequest, code: str) -> HttpResponse:
    """Month and list views of the person's calendar, the feed URL and reminder choices."""
    course = course_for(request, code)
    tz = course.tz
    today = timezone.now().astimezone(tz).date()
    view = "list" if request.GET.get("view") == "list" else "month"
    events = event_list(course=course, user=request.user)
    settings_row = calendar_settings_get(user=request.user, course=course)
    off = set(settings_row.reminders_off) if settings_row else set()
    context: dict[str, Any] = {
        "course": course,
        "view": view,
        "staff": is_staff(request.user, course),
        "settings": settings_row,
        "feed_url": request.build_absolute_uri(
            reverse("calendar:feed", kwargs={"token": settings_row.feed_token})
        )
        if settings_row and settings_row.feed_token
        else "",
        "reminders_form": RemindersForm(
            initial={"kinds": [k for k in REMINDER_KINDS if k not in off]}
        ),
        "reminder_hours": course.reminder_hours,
        "office_hours": [e for e in events if e.kind == "office-hours"][:1],
        "now": timezone.now(),
    }
    if view == "month":
        month = _month_arg(request.GET.get("month"), events, today, tz)
        prev_month = (month - dt.timedelta(days=1)).replace(day=1)
        next_month = (month + dt.timedelta(days=32)).replace(day=1)
        shown = [e for e in events if e.kind != "office-hours"]
        context |= {
            "month": month,
            "weeks": _month_grid(month, shown, tz, today),
            "prev_month": f"{prev_month:%Y-%m}",
            "next_month": f"{next_month:%Y-%m}",
            "weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
        }
    else:
        context["events"] = [e for e in events if e.kind != "office-hours"]
    return render(request, "calendar/calendar.html", context)


def _to_calendar(course: Course) -> HttpResponse:
    return redirect(reverse("calendar:calendar", kwargs={"code": course.code}))


@course_action()
def feed_create(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member makes their private iCal feed address."""
    with errors_as_messages(request):
        services.calendar_feed_get_or_create(actor=request.user, course=course)
        messages.success(request, "Your calendar feed is ready: copy its address below.")
    return _to_calendar(course)


@course_action()
def feed_rotate(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member replaces their feed address; the old one stops working at once."""
    with errors_as_messages(request):
        services.calendar_feed_rotate(actor=request.user, course=course)
        messages.success(
            request,
            "New feed address made; the old one no longer works. Subscribe again with the new one.",
        )
    return _to_calendar(course)


@course_action()
def feed_revoke(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member turns their feed off."""
    with errors_as_messages(request):
        services.calendar_feed_revoke(actor=request.user, course=course)
        messages.success(request, "Feed turned off; the old address no longer works.")
    return _to_calendar(course)


@course_action()
def reminders_save(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member chooses which kinds of e-mail reminder they get."""
    form = RemindersForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose among the listed kinds of reminder.")
        return _to_calendar(course)
    with errors_as_messages(request):
        wanted = set(form.cleaned_data["kinds"])
        services.reminders_set(
            actor=request.user,
            course=course,
            off=[k for k in REMINDER_KINDS if k not in wanted],
        )
        messages.success(request, "Reminder choices saved.")
    return _to_calendar(course)


@require_GET
def feed(request: Any, token: str) -> HttpResponse:
    """The person's iCal feed, without log-in: the secret URL is the credential. An unknown,
    rotated or revoked token, or a person no longer in the course, is a plain 404."""
    row = feed_owner(token)
    if row is None or not is_member(row.user, row.course):
        raise Http404("No such calendar.")
    course = row.course
    events = event_list(course=course, user=row.user, for_feed=True)
    who = "staff" if is_staff(row.user, course) else (row.user.get_full_name() or row.user.email)
    body = feed_calendar(
        course=course, title=f"{course.number or course.code} · {who}", events=events
    )
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{course.code}.ics"'
    response["Cache-Control"] = "private, max-age=300"
    response["X-Robots-Tag"] = "noindex"
    return response


class LectureForm(forms.Form):
    title = forms.CharField(max_length=200, help_text="As in the syllabus.")
    date = forms.DateField(
        help_text="Course-local date (YYYY-MM-DD); the lecture keeps its time of day.",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    is_guest = forms.BooleanField(
        required=False, label="Guest lecture", help_text="Given by a guest speaker."
    )


@login_required
def lecture_edit(request: AuthedRequest, code: str, lecture_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    lec = Lecture.objects.filter(course=course, pk=lecture_id).first()
    if lec is None:
        raise Http404("No such lecture.")
    initial = {
        "title": lec.title,
        "date": lec.starts_at.astimezone(course.tz).date(),
        "is_guest": lec.is_guest,
    }
    form = LectureForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.lecture_update(
                actor=request.user, course=course, lecture_id=lec.pk, **form.cleaned_data
            )
        except DomainError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, f"L{lec.number} saved.")
            return redirect(reverse("calendar:calendar", kwargs={"code": code}) + "?view=list")
    return render(
        request,
        "calendar/edit.html",
        {"course": course, "form": form, "what": f"L{lec.number}. {lec.title}"},
    )


class CourseDateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def format_value(self, value: Any) -> str | None:
        return value.strftime("%Y-%m-%dT%H:%M") if isinstance(value, dt.datetime) else value


class CourseDateTimeField(forms.DateTimeField):
    """A date and time in course time, both ways. The initial value is given in the course's
    zone (`instant.astimezone(course.tz)`) and shown as that wall clock; Django's own field would
    first convert it to the server's zone (UTC), so an unchanged form moved a deadline 7 hours.
    What is typed comes back naive-in-course-time through `local_to_utc`."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            return value.replace(tzinfo=None)
        return value

    def validate(self, value: Any) -> None:
        super().validate(value)
        if isinstance(value, dt.datetime) and value.year not in COURSE_YEARS:
            raise forms.ValidationError(OUT_OF_RANGE, code="out_of_range")


def course_datetime_field(label: str, help_text: str) -> forms.DateTimeField:
    return CourseDateTimeField(
        label=label,
        help_text=help_text,
        widget=CourseDateTimeInput(),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"],
    )


def local_to_utc(value: dt.datetime, tz: Any) -> dt.datetime:
    """A datetime typed in the course zone (the form sees it naive, or in UTC) → aware UTC.
    ValueError for a year outside `COURSE_YEARS`, as for any date that is none: 9999-12-31 is
    a valid date, but it overflows in UTC or when a slack day is added to it."""
    if value.year not in COURSE_YEARS:
        raise ValueError(OUT_OF_RANGE)
    naive = value.replace(tzinfo=None) if value.tzinfo else value
    return naive.replace(tzinfo=tz).astimezone(dt.UTC)


def deadline_edit(
    request: AuthedRequest,
    *,
    course: Any,
    form: forms.Form,
    what: str,
    old_due: dt.datetime,
    impact_of: Any,
    save: Any,
    back: str,
) -> HttpResponse:
    """The edit flow every deadline shares: a move is shown with its impact (who, from when to
    when, moot slack days) and saved only on the second, confirming submit. `impact_of(new_due)`
    and `save(cleaned, new_due, confirm)` come from the app that owns the deadline."""
    impact = None
    if request.method == "POST" and form.is_valid():
        new_due = local_to_utc(form.cleaned_data["due_at"], course.tz)
        confirm = request.POST.get("confirm") == "1"
        if new_due != old_due and not confirm:
            impact = impact_of(new_due)
        else:
            try:
                save(form.cleaned_data, new_due, confirm)
            except DomainError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(
                    request,
                    f"{what} saved."
                    + (" Everyone affected gets an e-mail." if new_due != old_due else ""),
                )
                return redirect(back)
    return render(
        request,
        "calendar/edit.html",
        {"course": course, "form": form, "what": what, "impact": impact},
    )
