"""Quotas and schedules per group (issue #69, item 4): a group over its GPU-hour quota is warned,
then its node stopped through the provider with the e-mail and the audit row; the nightly
shutdown keeps the node of a group whose opt-out was approved; a running node that stops
sending samples is "unknown" (shown and e-mailed once), never idle or busy."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client

from apps.compute.board.services import allocation_create
from apps.compute.cloud import sync as cloud
from apps.compute.models import (
    AutoStop,
    CloudOp,
    GpuSample,
    Node,
    ShutdownNight,
    ShutdownOptOut,
    UsagePolicy,
)
from apps.compute.usage import metering as usage
from apps.compute.usage import quotas, schedules, silence
from apps.compute.usage import rules as usage_rules
from apps.core.invariants import run_checks
from apps.core.models import AuditEvent, Role
from tests.factories import group_of, member

LA = zoneinfo.ZoneInfo("America/Los_Angeles")


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def _emails(group) -> set[str]:  # type: ignore[no-untyped-def]
    return set(group.memberships.values_list("user__email", flat=True))


# ------------------------------------------------------------------ rules (no database)


def test_a_week_starts_monday_midnight_course_time_and_a_term_never_resets() -> None:
    sunday_night = dt.datetime(2026, 2, 9, 7, 30, tzinfo=dt.UTC)  # Sun 8 Feb 23:30 PST
    start = usage_rules.period_start(sunday_night, "week", LA)
    assert start == dt.datetime(2026, 2, 2, 0, 0, tzinfo=LA)
    assert usage_rules.period_end(start, "week", LA) == dt.datetime(2026, 2, 9, 0, 0, tzinfo=LA)
    assert usage_rules.period_end(usage_rules.TERM_START, "term", LA) is None
    assert [usage_rules.quota_standing(u, 100, 80) for u in (0, 79.9, 80, 99, 100, 130)] == [
        "ok",
        "ok",
        "warn",
        "warn",
        "over",
        "over",
    ]
    assert usage_rules.quota_standing(500, 0, 80) == "none"


def test_the_nights_shutdown_and_an_opt_out_in_course_time() -> None:
    at = dt.time(2, 0)
    now = dt.datetime(2026, 3, 4, 9, 30, tzinfo=dt.UTC)  # Wed 4 Mar 01:30 PST
    night, moment = usage_rules.last_shutdown(now, at, LA)
    assert (night, moment) == (dt.date(2026, 3, 3), dt.datetime(2026, 3, 3, 2, 0, tzinfo=LA))
    assert usage_rules.next_shutdown(now, at, LA)[1] == dt.datetime(2026, 3, 4, 2, 0, tzinfo=LA)
    assert not usage_rules.shutdown_due(now, moment)  # 23 h 30 after: skipped, not made late
    assert usage_rules.shutdown_due(moment + dt.timedelta(minutes=4), moment)
    assert usage_rules.opt_out_problem(dt.date(2026, 3, 4), now, at, LA) is None
    passed = usage_rules.opt_out_problem(dt.date(2026, 3, 3), now, at, LA)
    assert passed
    assert "already happened" in passed
    assert "America/Los_Angeles" in passed
    far = usage_rules.opt_out_problem(dt.date(2026, 4, 30), now, at, LA)
    assert far
    assert "14 days" in far


def test_a_running_node_without_samples_for_30_minutes_is_unknown_never_idle_or_busy() -> None:
    now = dt.datetime(2026, 3, 4, 12, 0, tzinfo=dt.UTC)
    started = now - dt.timedelta(hours=5)

    def act(last: dt.datetime | None, util: float | None, status: str = "RUNNING") -> str:
        return usage_rules.activity(
            cloud_status=status,
            running_since=started,
            last_sample_at=last,
            last_util_max=util,
            idle_below=5,
            now=now,
        )

    assert act(now - dt.timedelta(minutes=5), 2) == "idle"
    assert act(now - dt.timedelta(minutes=5), 97) == "busy"
    assert act(now - dt.timedelta(minutes=30), 2) == "unknown"
    assert act(now - dt.timedelta(minutes=31), 97) == "unknown"
    assert act(None, None) == "unknown"
    assert act(now - dt.timedelta(hours=6), 2) == "unknown"  # a sample from before it started
    assert act(None, None, status="TERMINATED") == "off"


# ------------------------------------------------------------------ the quota


@pytest.mark.django_db(transaction=True)
def test_a_group_over_its_gpu_hour_quota_is_warned_then_stopped_with_the_email_and_audit_row(
    ee290, celery_eager, time_machine
) -> None:  # type: ignore[no-untyped-def]
    # The course file: 672 GPU-hours a week (84 h of an 8-GPU node), warned at 80 %.
    policy = UsagePolicy.objects.get(course=ee290)
    assert (policy.gpu_hours, policy.period, policy.warn_pct) == (672, "week", 80)
    staff = member(ee290, Role.INSTRUCTOR)
    alpha, bravo = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    monday = dt.datetime(2026, 2, 2, 8, 0, tzinfo=LA)
    time_machine.move_to(monday)
    node = allocation_create(actor=staff, course=ee290, group_id=alpha.pk).node
    allocation_create(actor=staff, course=ee290, group_id=bravo.pk)
    cloud.record_status(node, "RUNNING", monday)
    student = alpha.memberships.first().user

    # 68 h: 544 GPU-hours, 81 %: the group (not staff) is warned once, and sees it.
    time_machine.move_to(monday + dt.timedelta(hours=68))
    mail.outbox.clear()
    assert quotas.quota_enforce(ee290) == ["Alpha: warned at 544/672"]
    assert quotas.quota_enforce(ee290) == []
    (warn,) = mail.outbox
    assert set(warn.to) == _emails(alpha)
    assert "544 of its 672 GPU-hours this week (81%)" in warn.body
    page = _login(student).get(f"/c/{ee290.code}/node/").content.decode()
    assert "544.0 used of 672" in page
    assert "<meter" in page
    today = _login(student).get(f"/c/{ee290.code}/").content.decode()
    assert "81% of your GPU-hours used: 544 of 672" in today
    assert not CloudOp.objects.filter(kind=CloudOp.Kind.STOP).exists()

    # 84 h 6 min: the quota is used; the node is stopped through the provider, as a job that
    # ends done, with its audit row; the group and staff get one e-mail.
    time_machine.move_to(monday + dt.timedelta(hours=84, minutes=6))
    mail.outbox.clear()
    assert quotas.quota_enforce(ee290) == ["Alpha: ee290-node-1 stopped at 672.8/672"]
    stop = CloudOp.objects.get(course=ee290, kind=CloudOp.Kind.STOP)
    cloud.drain(ee290.pk)
    stop.refresh_from_db()
    assert stop.status == CloudOp.Status.DONE, stop.reason
    node.refresh_from_db()
    assert node.cloud_status == "TERMINATED"
    (sent,) = mail.outbox
    assert set(sent.to) == _emails(alpha) | {staff.email}
    assert "used 672.8 of its 672 GPU-hours this week" in sent.subject + sent.body
    assert "ee290-node-1 stopped" in sent.subject
    auto = AutoStop.objects.get(course=ee290)
    assert (auto.cause, auto.op_id, auto.group_id) == ("quota", stop.pk, alpha.pk)
    audit = AuditEvent.objects.get(course=ee290, action="compute.auto_stop")
    assert audit.after["job"] == stop.pk
    assert audit.object_id == str(node.pk)
    assert not [v for v in run_checks(ee290.pk) if "audit" in v.check]

    # Over its quota the group cannot start it again (staff can); nothing is e-mailed twice.
    r = _login(student).post(f"/c/{ee290.code}/compute/nodes/{node.pk}/start/", follow=True)
    assert "has used its 672 GPU-hours" in r.content.decode()
    assert not CloudOp.objects.filter(kind=CloudOp.Kind.START).exists()
    assert quotas.quota_enforce(ee290) == []
    assert len(mail.outbox) == 1
    # Staff raise its quota (with a reason, audited): the group may start again.
    r = _login(staff).post(
        f"/c/{ee290.code}/compute/usage/quota/",
        {"group": alpha.pk, "gpu_hours": 1000, "note": "Final project sweep"},
    )
    assert r.status_code == 302
    assert AuditEvent.objects.filter(
        action="compute.quota_set", note="Final project sweep"
    ).exists()
    assert quotas.start_refusal(ee290, alpha.pk) == ""
    usage_page = _login(staff).get(f"/c/{ee290.code}/compute/usage/").content.decode()
    assert "/ 1000 (67%)" in usage_page, usage_page[usage_page.find("GPU-hours by group") :][:3000]
    assert "the group's own quota" in usage_page


@pytest.mark.django_db
def test_a_quota_change_without_a_reason_is_refused_with_a_clear_error(ee290) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    alpha = group_of(ee290, 4, "Alpha")
    r = _login(staff).post(
        f"/c/{ee290.code}/compute/usage/quota/", {"group": alpha.pk, "gpu_hours": 10}, follow=True
    )
    assert "Say why you change the group&#x27;s quota." in r.content.decode()
    assert not AuditEvent.objects.filter(action="compute.quota_set").exists()


# ------------------------------------------------------------------ the nightly shutdown


@pytest.mark.django_db(transaction=True)
def test_the_nightly_shutdown_stops_running_nodes_but_keeps_an_approved_opt_out(
    ee290, celery_eager, time_machine
) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    alpha, bravo = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    afternoon = dt.datetime(2026, 3, 3, 15, 0, tzinfo=LA)
    time_machine.move_to(afternoon)
    na = allocation_create(actor=staff, course=ee290, group_id=alpha.pk).node
    nb = allocation_create(actor=staff, course=ee290, group_id=bravo.pk).node
    for n in (na, nb):
        cloud.record_status(n, "RUNNING", afternoon)
    a_student, b_student = alpha.memberships.first().user, bravo.memberships.first().user

    # The form: help text, and a clear error for a night that has passed.
    url = f"/c/{ee290.code}/node/usage/"
    page = _login(a_student).get(url).content.decode()
    assert "02:00 (America/Los_Angeles)" in page
    assert "The date of the 02:00" in page
    r = _login(a_student).post(url, {"night": "2026-03-03", "reason": "sweep"})
    assert "has already happened; choose a later night" in r.content.decode()
    r = _login(a_student).post(url, {"night": "", "reason": ""})
    assert "Say what has to keep running through the night." in r.content.decode()
    # Both groups ask for tonight's (Wed 4 Mar 02:00); staff approve Alpha, decline Bravo.
    assert (
        _login(a_student).post(url, {"night": "2026-03-04", "reason": "ViT sweep"}).status_code
        == 302
    )
    again = _login(a_student).post(url, {"night": "2026-03-04", "reason": "again"})
    assert (
        "already asked to skip the shutdown of Wed 4 Mar (awaiting staff)" in again.content.decode()
    )
    assert _login(b_student).post(url, {"night": "2026-03-04", "reason": "eval"}).status_code == 302
    oa = ShutdownOptOut.objects.get(group=alpha)
    ob = ShutdownOptOut.objects.get(group=bravo)
    today = _login(staff).get(f"/c/{ee290.code}/").content.decode()
    assert "2 request(s) to skip the nightly shutdown" in today
    c = _login(staff)
    assert c.post(f"/c/{ee290.code}/compute/opt-outs/{oa.pk}/approve/").status_code == 302
    r = c.post(f"/c/{ee290.code}/compute/opt-outs/{ob.pk}/decline/", {"note": ""}, follow=True)
    assert "Say why" in r.content.decode() or "Reason:" in r.content.decode()
    c.post(f"/c/{ee290.code}/compute/opt-outs/{ob.pk}/decline/", {"note": "Eval fits by day"})
    ob.refresh_from_db()
    assert ob.status == "declined"
    assert ob.note == "Eval fits by day"

    # 01:55: not yet. 02:03, beat's task: Bravo's node stopped (job done, audited), Alpha's kept.
    time_machine.move_to(dt.datetime(2026, 3, 4, 1, 55, tzinfo=LA))
    assert schedules.shutdown_run(ee290) == []
    time_machine.move_to(dt.datetime(2026, 3, 4, 2, 3, tzinfo=LA))
    mail.outbox.clear()
    from apps.compute.usage.tasks import usage_rules_run

    assert usage_rules_run() >= 1
    assert schedules.shutdown_run(ee290) == []  # the night is made once
    cloud.drain(ee290.pk)
    na.refresh_from_db()
    nb.refresh_from_db()
    assert (na.cloud_status, nb.cloud_status) == ("RUNNING", "TERMINATED")
    night = ShutdownNight.objects.get(course=ee290)
    assert (night.stopped, night.kept) == ([nb.name], [na.name])
    stop = AutoStop.objects.get(course=ee290, cause="schedule")
    assert stop.op.status == CloudOp.Status.DONE
    assert AuditEvent.objects.filter(action="compute.auto_stop", after__job=stop.op_id).exists()
    stopped_mail = [m for m in mail.outbox if "stopped for the night" in m.subject]
    assert [set(m.to) for m in stopped_mail] == [_emails(bravo)]
    # Beat schedules it, and the task is registered (the start-up check sees both).
    assert settings.CELERY_BEAT_SCHEDULE["usage-rules"]["task"] == "compute.usage_rules"
    from celery import current_app

    assert "compute.usage_rules" in current_app.tasks


@pytest.mark.django_db(transaction=True)
def test_an_opt_out_is_approved_as_asked_when_the_course_file_says_auto(
    ee290, time_machine
) -> None:  # type: ignore[no-untyped-def]
    UsagePolicy.objects.filter(course=ee290).update(opt_out_approval="auto")
    alpha = group_of(ee290, 4, "Alpha")
    time_machine.move_to(dt.datetime(2026, 3, 3, 15, 0, tzinfo=LA))
    o = schedules.opt_out_request(
        actor=alpha.memberships.first().user,
        course=ee290,
        night=dt.date(2026, 3, 4),
        reason="long run",
    )
    assert o.status == "approved"


# ------------------------------------------------------------------ silence


@pytest.mark.django_db(transaction=True)
def test_a_running_node_that_stops_sending_samples_is_unknown_emailed_once_never_idle(
    ee290, time_machine
) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    alpha = group_of(ee290, 4, "Alpha")
    start = dt.datetime(2026, 3, 3, 8, 0, tzinfo=LA)
    time_machine.move_to(start)
    node = allocation_create(actor=staff, course=ee290, group_id=alpha.pk).node
    cloud.record_status(node, "RUNNING", start)
    # 7 idle hours of samples (busiest GPU at 2 %), then nothing.
    for i in range(7 * 12 + 1):
        GpuSample.objects.create(
            node=node,
            at=start + dt.timedelta(minutes=5 * i),
            util_mean=1,
            util_max=2,
            mem_used_mib=500,
            gpus=8,
        )
    last = start + dt.timedelta(hours=7)
    student = alpha.memberships.first().user
    time_machine.move_to(last + dt.timedelta(minutes=10))
    assert silence.silence_check(ee290) == []
    assert "Activity: idle" in _login(student).get(f"/c/{ee290.code}/node/").content.decode()

    time_machine.move_to(last + dt.timedelta(minutes=35))
    mail.outbox.clear()
    assert silence.silence_check(ee290) == [node.name]
    assert silence.silence_check(ee290) == []
    (sent,) = mail.outbox
    assert set(sent.to) == _emails(alpha) | {staff.email}
    assert "activity unknown" in sent.subject
    # Never idle: the idle check does not call a silent node idle (nor stop it).
    assert usage.idle_check(ee290) == []
    page = _login(student).get(f"/c/{ee290.code}/node/").content.decode()
    assert "Activity unknown" in page
    assert "Activity: idle" not in page
    board = _login(staff).get(f"/c/{ee290.code}/compute/usage/").content.decode()
    assert ">unknown<" in board

    # A sample ends the spell; a later silence is a new spell, told again.
    GpuSample.objects.create(
        node=node,
        at=last + dt.timedelta(minutes=40),
        util_mean=90,
        util_max=99,
        mem_used_mib=1,
        gpus=8,
    )
    time_machine.move_to(last + dt.timedelta(minutes=41))
    assert silence.silence_check(ee290) == []
    assert "Activity: busy" in _login(student).get(f"/c/{ee290.code}/node/").content.decode()
    time_machine.move_to(last + dt.timedelta(minutes=75))
    assert silence.silence_check(ee290) == [node.name]
    assert len(mail.outbox) == 2
    Node.objects.filter(pk=node.pk)  # the node itself is untouched: no stop for silence
    assert not CloudOp.objects.filter(kind=CloudOp.Kind.STOP).exists()


# ------------------------------------------------------------------ the course file


def test_the_course_file_validates_the_quota_and_the_shutdown(course_file_text: str) -> None:
    import yaml

    from apps.core.coursefile import CourseFileError, parse_course_file

    raw = yaml.safe_load(course_file_text)
    raw["compute"]["gpu_hour_quota"] = {"gpu_hours": -1, "per": "month", "warn_at_pct": 100}
    raw["compute"]["scheduled_shutdown"] = {"at": "25:00", "zone": "America/Los_Angeles"}
    with pytest.raises(CourseFileError) as info:
        parse_course_file(yaml.safe_dump(raw, sort_keys=False))
    found = " | ".join(info.value.problems)
    for key in ("gpu_hours", "per", "warn_at_pct", "scheduled_shutdown.at"):
        assert f"compute.{'gpu_hour_quota.' if '.' not in key else ''}{key}" in found, found
    raw = yaml.safe_load(course_file_text)
    raw["compute"]["scheduled_shutdown"]["zone"] = "Europe/Berlin"
    with pytest.raises(CourseFileError) as info:
        parse_course_file(yaml.safe_dump(raw, sort_keys=False))
    assert any("is not the course's time zone" in p for p in info.value.problems)
    del raw["compute"]["gpu_hour_quota"], raw["compute"]["scheduled_shutdown"]
    cf = parse_course_file(yaml.safe_dump(raw, sort_keys=False))
    assert cf.compute is not None
    assert (cf.compute.gpu_hour_quota.gpu_hours, cf.compute.scheduled_shutdown) == (0, None)
