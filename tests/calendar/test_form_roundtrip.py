"""Every date/time edit form shows course time and reads it back: opened and saved unchanged, in
summer (PDT) and in winter (PST), it moves nothing and e-mails nobody.

The forms are read as a browser would: every input, select and textarea of the page's form with
its shown value, posted back as is.
"""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser

import pytest
from django.core import mail
from django.test import Client

from apps.calendar.models import Assignment, Lecture, Milestone
from apps.core.models import User

pytestmark = pytest.mark.django_db


class FormFields(HTMLParser):
    """The fields of the first POST form with a given field, as a browser would submit them."""

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle, self.forms, self._current = needle, [], None
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method", "").lower() == "post":
            self._current = {"__action__": a.get("action", "")}
        elif self._current is None:
            return
        elif tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind == "submit":
                return
            self._current[a["name"]] = a.get("value", "on" if kind == "checkbox" else "")
        elif tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select and "selected" in a:
            self._current[self._select] = a.get("value", "")
        elif tag == "textarea":
            self._textarea = a.get("name")
            self._current[self._textarea or ""] = ""

    def handle_data(self, data: str) -> None:
        if self._current is not None and self._textarea:
            self._current[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "form" and self._current is not None:
            self.forms.append(self._current)
            self._current = None

    def form_with(self, html: str) -> dict[str, str]:
        self.feed(html)
        return next(f for f in self.forms if self.needle in f)


def _staff(course) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(User.objects.get(email="instructor@example.edu"))
    return c


# A5 is due in April (PDT); A1 in January (PST). Milestones and lectures likewise.
SEASONS = {"PDT": dt.date(2026, 4, 15), "PST": dt.date(2026, 1, 25)}


def _nearest(qs, field: str, day: dt.date):  # type: ignore[no-untyped-def]
    return min(qs, key=lambda o: abs(getattr(o, field).date() - day))


@pytest.mark.parametrize("season", sorted(SEASONS))
@pytest.mark.parametrize("kind", ["assignments", "milestones", "lectures"])
def test_an_edit_form_saved_unchanged_changes_nothing(
    ee290_demo, season: str, kind: str, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    model, field, needle = {
        "assignments": (Assignment, "due_at", "due_at"),
        "milestones": (Milestone, "due_at", "due_at"),
        "lectures": (Lecture, "starts_at", "date"),
    }[kind]
    obj = _nearest(model.objects.filter(course=course), field, SEASONS[season])
    zone = getattr(obj, field).astimezone(course.tz).tzname()
    assert zone == season  # the object chosen is on the season's side of the change
    before = {f.attname: getattr(obj, f.attname) for f in model._meta.concrete_fields}
    url = f"/c/{course.code}/calendar/{kind}/{obj.pk}/edit/"
    client = _staff(course)
    page = client.get(url).content.decode()
    shown = getattr(obj, field).astimezone(course.tz)
    if needle == "due_at":
        assert f'value="{shown:%Y-%m-%dT%H:%M}"' in page  # the course's wall clock, not UTC
    data = FormFields(needle).form_with(page)
    data.pop("__action__")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    obj.refresh_from_db()
    after = {f.attname: getattr(obj, f.attname) for f in model._meta.concrete_fields}
    assert after == before
    assert mail.outbox == []


@pytest.mark.parametrize(
    ("page", "needle", "model_field"),
    [
        ("scribing/", "preferences_due_at", "scribing.ScribePlan.preferences_due_at"),
        ("questionnaire/", "opens_at", "onboarding.Questionnaire.opens_at"),
    ],
)
@pytest.mark.parametrize("wall_clock", ["2026-01-16T23:59", "2026-06-01T09:00"])  # PST, PDT
def test_a_window_form_saved_unchanged_keeps_its_times(
    ee290_demo, page: str, needle: str, model_field: str, wall_clock: str
) -> None:  # type: ignore[no-untyped-def]
    """The staff forms that set a deadline or a window (scribing preferences, the questionnaire)
    show course time and read it back, in winter and in summer."""
    from django.apps import apps

    course = ee290_demo
    app, model_name, field = model_field.split(".")
    model = apps.get_model(app, model_name)
    client = _staff(course)
    if page == "questionnaire/":
        client.post(f"/c/{course.code}/questionnaire/create/")
    client.get(f"/c/{course.code}/{page}")  # the scribing plan is made on the first visit
    row = model.objects.get(course=course)
    instant = dt.datetime.fromisoformat(wall_clock).replace(tzinfo=course.tz)
    extra = {"closes_at": instant + dt.timedelta(days=7)} if page == "questionnaire/" else {}
    model.objects.filter(pk=row.pk).update(**{field: instant, **extra})
    row.refresh_from_db()
    html = client.get(f"/c/{course.code}/{page}").content.decode()
    assert f'value="{wall_clock}"' in html
    data = FormFields(needle).form_with(html)
    action = data.pop("__action__")
    response = client.post(action, data, follow=True)
    assert "aved." in response.content.decode()  # "Saved." / "Scribing rules saved."
    after = model.objects.get(pk=row.pk)
    assert getattr(after, field) == getattr(row, field)
    if extra:
        assert after.closes_at == row.closes_at


@pytest.mark.parametrize("wall_clock", ["2026-01-16T23:59", "2026-06-01T09:00"])  # PST, PDT
def test_the_assessment_window_form_saved_unchanged_keeps_its_times(
    ee290_demo, wall_clock: str
) -> None:  # type: ignore[no-untyped-def]
    """The pre/post form's window shows what is set (it used to show empty boxes, so saving it
    unchanged closed the form) in course time, with the zone named."""
    from apps.assessments.models import Administration

    course = ee290_demo
    adm = Administration.objects.filter(assessment__course=course, phase="pre").first()
    assert adm is not None
    opens = dt.datetime.fromisoformat(wall_clock).replace(tzinfo=course.tz)
    Administration.objects.filter(pk=adm.pk).update(
        opens_at=opens, closes_at=opens + dt.timedelta(days=3)
    )
    adm.refresh_from_db()
    client = _staff(course)
    html = client.get(f"/c/{course.code}/assessments/{adm.assessment_id}/").content.decode()
    assert f'value="{wall_clock}"' in html
    assert f"opens ({course.timezone})" in html
    data = next(f for f in _all_forms(html) if f.get("phase") == "pre" and "opens_at" in f)
    action = data.pop("__action__")
    response = client.post(action, data, follow=True)
    assert "window is saved" in response.content.decode()
    after = Administration.objects.get(pk=adm.pk)
    assert (after.opens_at, after.closes_at) == (adm.opens_at, adm.closes_at)


def _all_forms(html: str) -> list[dict[str, str]]:
    parser = FormFields("")
    parser.feed(html)
    return parser.forms
