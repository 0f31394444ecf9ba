"""The study protocol around the quiz: a separate, voluntary demographics form tied to the
participant ID only, and raw data deleted at the course file's retention date (instructors warned
a month before), the de-identified report still opening afterwards."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.assessments import services
from apps.assessments.models import Demographics, IdentityLink, Response, ResponseImport
from apps.assessments.study import purge_at, retention_sweep
from apps.core.models import AuditEvent
from tests.assessments.conftest import Setup, answers_for, make_csv
from tests.factories import LectureFactory, member

pytestmark = pytest.mark.django_db


def _take(quiz: Setup, user, *, no_research: bool) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    services.window_set(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        opens_at=now - dt.timedelta(hours=1),
        closes_at=now + dt.timedelta(hours=2),
    )
    services.form_start(
        actor=user,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        consent=True,
        no_research=no_research,
    )
    services.form_submit(
        actor=user,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        answers={"q1": ["b"]},
    )


def test_demographics_are_voluntary_separate_and_tied_to_the_participant_id_only(
    quiz: Setup,
) -> None:
    agreed, declined, absent = (member(quiz.course) for _ in range(3))
    _take(quiz, agreed, no_research=False)
    _take(quiz, declined, no_research=True)
    url = f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/demographics/"
    c = Client()
    c.force_login(agreed)
    detail = c.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/").content.decode()
    assert "demographics form" in detail
    r = c.post(url, {"program": "phd", "experience": "1-2", "prior_course": ""}, follow=True)
    assert "saved under your participant ID only" in r.content.decode()
    row = Demographics.objects.get()
    assert (row.program, row.experience, row.prior_course) == ("phd", "1-2", "")
    assert (
        row.participant.code == services.participant_for(quiz.assessment, agreed, create=False).code
    )  # type: ignore[union-attr]
    # Nothing in the row or the audit trail names the person.
    assert not AuditEvent.objects.filter(actor=agreed, action__icontains="demograph").exists()
    assert "program" not in str(list(Response.objects.values_list("answers", flat=True)))
    # A bad value is named; an opted-out or absent student is told nothing is collected.
    bad = c.post(url, {"program": "wizard"}).content.decode()
    assert "Select a valid choice" in bad
    for other in (declined, absent):
        oc = Client()
        oc.force_login(other)
        page = oc.post(url, {"program": "ms"}).content.decode()
        assert "nothing is collected otherwise" in page
    assert Demographics.objects.count() == 1
    staff = Client()
    staff.force_login(quiz.staff)
    report = staff.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/").content.decode()
    assert "PhD &lt;5" in report  # a single answer is never shown as a count of 1
    assert staff.post(url, {"program": "ms"}).status_code == 403


def test_past_the_retention_date_raw_imports_and_the_id_map_are_gone_and_the_report_opens(
    quiz: Setup, django_capture_on_commit_callbacks: Any
) -> None:
    rng = random.Random(3)
    rows = [(f"{100000 + i}", answers_for(rng, 0.5)) for i in range(12)]
    imp = services.import_preview(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        filename="pre.csv",
        data=make_csv(rows),
    )
    services.import_commit(
        actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, import_id=imp.pk
    )
    student = member(quiz.course)
    _take(quiz, student, no_research=False)
    last = LectureFactory(course=quiz.course, starts_at=timezone.now() + dt.timedelta(days=10))
    when = purge_at(quiz.course)
    assert when == last.starts_at + dt.timedelta(days=365)
    assert ResponseImport.objects.count() == 1
    assert IdentityLink.objects.count() == 1
    responses = Response.objects.count()

    with time_machine.travel(when - dt.timedelta(days=31)):
        assert retention_sweep(timezone.now()) == []
    with time_machine.travel(when - dt.timedelta(days=29)):
        # The warning is recorded with the warned mark and sent once that commits.
        with django_capture_on_commit_callbacks(execute=True):
            said = retention_sweep(timezone.now())
        assert len(said) == 1
        assert "instructors warned" in said[0]
        with django_capture_on_commit_callbacks(execute=True):
            assert retention_sweep(timezone.now()) == []  # warned once
    warned = [m for m in mail.outbox if "raw study data is deleted" in m.subject]
    assert len(warned) == 1
    assert warned[0].to == [quiz.staff.email]
    assert ResponseImport.objects.count() == 1  # nothing deleted before the date

    with time_machine.travel(when + dt.timedelta(hours=1)):
        said = retention_sweep(timezone.now())
    assert said == [
        f"{quiz.course.code} {quiz.assessment.title}: deleted 1 raw import(s) and 1 ID link(s)"
    ]
    assert ResponseImport.objects.count() == 0
    assert IdentityLink.objects.count() == 0
    assert Response.objects.count() == responses  # de-identified responses stay
    event = AuditEvent.objects.get(action="assessments.retention_purge")
    assert event.after["imports"] == 1
    c = Client()
    c.force_login(quiz.staff)
    page = c.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/")
    assert page.status_code == 200
    assert "were deleted" in page.content.decode()
    summary = c.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/?format=json")
    assert summary.status_code == 200
    assert '"pre"' in summary.content.decode()
    with time_machine.travel(when + dt.timedelta(days=2)):
        assert retention_sweep(timezone.now()) == []  # once
