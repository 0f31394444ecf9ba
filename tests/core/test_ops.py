"""What operators look at: the staff jobs page names a stuck grading pass by its age, `/readyz`
says which dependency is missing, `/metrics` speaks Prometheus to loopback or a token only."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import GradingPass, GradingRun
from apps.core.models import Heartbeat, Role
from tests.factories import CourseFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def _stuck_pass(course, minutes: int) -> GradingPass:  # type: ignore[no-untyped-def]
    qs = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    run = GradingRun.objects.create(question_set=qs, key_version="k", status="running")
    p = GradingPass.objects.create(run=run, number=1, status="running", chunks_total=4)
    ago = timezone.now() - dt.timedelta(minutes=minutes)
    GradingPass.objects.filter(pk=p.pk).update(created_at=ago, started_at=ago, heartbeat_at=ago)
    return p


def test_the_jobs_page_shows_a_stuck_pass_by_its_age_to_staff_only() -> None:
    course = CourseFactory()
    _stuck_pass(course, minutes=42)
    staff, student = Client(), Client()
    staff.force_login(member(course, Role.TA))
    student.force_login(member(course, Role.STUDENT))
    page = staff.get(f"/c/{course.code}/jobs/").content.decode()
    assert "1 stuck" in page
    assert "42 min" in page
    assert "pass 1 (0/4 chunks)" in page
    assert student.get(f"/c/{course.code}/jobs/").status_code == 403


def test_grade_again_on_a_stuck_pass_supersedes_it() -> None:
    from apps.autograder.passes import run_create
    from apps.autograder.services import key_version

    course = CourseFactory()
    stuck = _stuck_pass(course, minutes=10)
    stuck.run.key_version = key_version(stuck.run.question_set)  # the run of the current key
    stuck.run.save()
    staff = member(course, Role.TA)
    run = run_create(actor=staff, question_set=stuck.run.question_set)
    stuck.refresh_from_db()
    assert stuck.status == "failed"
    assert stuck.note.startswith("superseded: no worker had moved it for 10 min")
    assert run.passes.order_by("-number").first().number == 2


def test_readyz_names_what_is_missing_only_to_staff_or_the_token(settings) -> None:  # type: ignore[no-untyped-def]
    settings.METRICS_TOKEN = "s3cret-token"
    client = Client(HTTP_AUTHORIZATION="Bearer s3cret-token")
    body = client.get("/readyz").json()
    assert body["ready"] is False
    assert "no worker has run beat's sweep yet" in body["checks"]["worker_and_beat"]["detail"]
    assert Client().get("/readyz").json() == {"ready": False}  # anonymous: ready or not, no more
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    assert "checks" in staff.get("/readyz").json()
    Heartbeat.objects.create(name="sweep", at=timezone.now())
    assert client.get("/readyz").json()["ready"] is True
    Heartbeat.objects.filter(name="sweep").update(at=timezone.now() - dt.timedelta(minutes=5))
    assert (
        "last ran 300 s ago" in client.get("/readyz").json()["checks"]["worker_and_beat"]["detail"]
    )


def test_metrics_speak_prometheus_to_loopback_in_development(settings) -> None:  # type: ignore[no-untyped-def]
    settings.METRICS_TRUST_LOOPBACK = True
    course = CourseFactory()
    _stuck_pass(course, minutes=30)
    local = Client(REMOTE_ADDR="127.0.0.1")
    Client().get("/healthz")
    body = local.get("/metrics").content.decode()
    assert 'courseops_jobs{kind="grading pass",status="stuck"} 1.0' in body
    assert "django_http_requests_total_by_view_transport_method_total" in body
    settings.METRICS_TOKEN = "s3cret-token"
    outside = Client(REMOTE_ADDR="203.0.113.9")
    assert outside.get("/metrics").status_code == 401


def test_in_production_metrics_need_the_token_whatever_the_address(settings) -> None:  # type: ignore[no-untyped-def]
    settings.METRICS_TRUST_LOOPBACK = False  # as courseops.settings.production has it
    settings.METRICS_TOKEN = ""
    proxied = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert proxied.get("/metrics").status_code == 404  # off without a token
    settings.METRICS_TOKEN = "s3cret-token"
    assert proxied.get("/metrics").status_code == 401
    assert proxied.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    ok = proxied.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert ok.status_code == 200
    assert "courseops_jobs" in ok.content.decode()
