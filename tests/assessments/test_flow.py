"""Pre/post as staff and students use it: imports checked row by row (all or nothing), opt-outs
left out of everything, unmatched IDs counted, small groups suppressed, the ID map destroyed
without losing the analytics, the timed form (consent first, late answers refused), and who may
read what."""

from __future__ import annotations

import datetime as dt
import random

import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.assessments import report, services
from apps.assessments.models import IdentityLink, Response
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from tests.assessments.conftest import Setup, answers_for, make_csv
from tests.factories import member

pytestmark = pytest.mark.django_db


def _start(
    quiz: Setup, user, phase: str, *, consent: bool = True, no_research: bool = False
) -> Response:  # type: ignore[no-untyped-def]
    return services.form_start(
        actor=user,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase=phase,
        consent=consent,
        no_research=no_research,
    )


def _store(quiz: Setup, phase: str, data: bytes) -> None:
    imp = services.import_preview(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase=phase,
        filename=f"{phase}.csv",
        data=data,
    )
    services.import_commit(
        actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, import_id=imp.pk
    )


def test_a_file_with_problems_names_each_by_row_and_column_and_stores_nothing(quiz: Setup) -> None:
    rng = random.Random(1)
    rows = [(f"X{i}", answers_for(rng, 0.5)) for i in range(6)]
    rows[2][1]["q3"] = "e"  # not an option
    rows[4] = ("", rows[4][1])  # no ID
    imp = services.import_preview(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        filename="pre.csv",
        data=make_csv(rows),
    )
    assert imp.report["problems"] == [
        "row 4, column “q3”: “e” is not one of the options (a, b, c, d)",
        "row 6, column “Participant ID”: no participant ID",
    ]
    with pytest.raises(Conflict, match="Nothing was stored: the file has 2 problem"):
        services.import_commit(
            actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, import_id=imp.pk
        )
    assert Response.objects.count() == 0
    bad = services.import_preview(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        filename="x.csv",
        data=b"name,q1\nAda,b\n",
    )
    assert bad.report["problems"] == [
        "row 1: no participant-ID column (a header such as “Participant ID”)"
    ]


def test_a_repeated_id_keeps_the_later_row_and_says_so(quiz: Setup) -> None:
    rng = random.Random(2)
    first, second = answers_for(rng, 0.0), answers_for(rng, 1.0)
    data = make_csv([("Z1", first), ("Z1", second)])
    imp = services.import_preview(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        filename="pre.csv",
        data=data,
    )
    assert imp.report["notes"] == ["row 3: participant Z1 also on row 2; the later row is kept"]
    services.import_commit(
        actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, import_id=imp.pk
    )
    assert Response.objects.get().total == 12


def test_opt_outs_unmatched_ids_and_suppression_below_five(quiz: Setup) -> None:
    rng = random.Random(3)
    pre = [(f"M{i}", answers_for(rng, 0.3)) for i in range(7)]
    post = [
        (f"M{i}", answers_for(rng, 0.9)) for i in range(2, 9)
    ]  # M0, M1 pre only; M7, M8 post only
    _store(quiz, "pre", make_csv([(f"{c} no research" if c == "M2" else c, a) for c, a in pre]))
    _store(quiz, "post", make_csv(post))
    rep = report.build(quiz.assessment)
    assert rep["counts"] == {
        "pre": 6,
        "post": 6,
        "matched": 4,
        "unmatched_pre": 2,
        "unmatched_post": 2,
        "opted_out": 1,
    }
    assert rep["paired"] == {
        "n": 4,
        "suppressed": True,
        "reason": "fewer than 5 matched participants",
    }
    assert rep["phases"]["pre"]["n"] == 6
    assert sum(rep["phases"]["pre"]["histogram"]) == 6  # M2 is in no bar
    rows = report.participants_csv_rows(quiz.assessment)
    assert "M2" not in {r[0] for r in rows}
    # M2's own score is still kept for them
    assert (
        Response.objects.get(participant__code="M2", administration__phase="pre").total is not None
    )


def test_destroying_the_id_map_keeps_the_analytics_and_ends_self_service(quiz: Setup) -> None:
    now = timezone.now()
    student = member(quiz.course)
    services.window_set(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        opens_at=now - dt.timedelta(hours=1),
        closes_at=now + dt.timedelta(hours=1),
    )
    _start(quiz, student, "pre", consent=True, no_research=False)
    services.form_submit(
        actor=student,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        answers={"q1": ["b"]},
    )
    rng = random.Random(4)
    _store(quiz, "pre", make_csv([(f"D{i}", answers_for(rng, 0.5)) for i in range(8)]))
    before = report.build(quiz.assessment)
    ta = member(quiz.course, Role.TA)
    c = Client()
    c.force_login(ta)
    page = c.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/?format=map")
    assert not getattr(page, "streaming", False)  # a TA gets the page, not the map
    c.force_login(quiz.staff)  # the instructor
    id_map = b"".join(
        c.get(
            f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/?format=map"
        ).streaming_content
    ).decode()
    assert student.email in id_map
    with pytest.raises(NotAllowed):
        services.identities_destroy(
            actor=ta, course=quiz.course, assessment_id=quiz.assessment.pk, confirm=True
        )
    with pytest.raises(Conflict, match="confirm"):
        services.identities_destroy(
            actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, confirm=False
        )
    assert (
        services.identities_destroy(
            actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, confirm=True
        )
        == 1
    )
    assert IdentityLink.objects.count() == 0
    quiz.assessment.refresh_from_db()
    assert report.build(quiz.assessment) == before
    assert services.own_responses(quiz.assessment, student) == []
    with pytest.raises(Conflict, match="destroyed"):
        _start(quiz, student, "pre", consent=True, no_research=False)


def _open_pre_now(quiz: Setup) -> dt.datetime:
    """The pre form open from an hour ago for two hours; returns now."""
    now = timezone.now()
    services.window_set(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        opens_at=now - dt.timedelta(hours=1),
        closes_at=now + dt.timedelta(hours=2),
    )
    return now


def test_the_timed_form_needs_consent_and_refuses_late_answers(quiz: Setup) -> None:
    now = _open_pre_now(quiz)
    on_time, late = member(quiz.course), member(quiz.course)
    aid = quiz.assessment.pk
    with pytest.raises(DomainError, match="research notice"):
        _start(quiz, on_time, "pre", consent=False, no_research=False)
    with pytest.raises(NotAllowed):
        _start(quiz, quiz.staff, "pre", consent=True, no_research=False)
    for s in (on_time, late):
        _start(quiz, s, "pre", consent=True, no_research=s == late)
    with time_machine.travel(now + dt.timedelta(minutes=4, seconds=59)):
        r = services.form_submit(
            actor=on_time,
            course=quiz.course,
            assessment_id=aid,
            phase="pre",
            answers={"q1": ["b"], "q6": ["40", "100"]},
        )
    assert r.total == 3
    with (
        time_machine.travel(now + dt.timedelta(minutes=5, seconds=30)),
        pytest.raises(Conflict, match="Time is up"),
    ):
        services.form_submit(
            actor=late, course=quiz.course, assessment_id=aid, phase="pre", answers={"q1": ["b"]}
        )
    late_row = Response.objects.get(participant__identity__user=late)
    assert (late_row.status, late_row.total, late_row.opted_out) == ("late", None, True)
    with pytest.raises(Conflict, match="already taken"):
        _start(quiz, on_time, "pre", consent=True, no_research=False)
    with pytest.raises(Conflict, match="not open yet"):
        _start(quiz, on_time, "post", consent=True, no_research=False)
    code = services.participant_for(quiz.assessment, on_time, create=False).code  # type: ignore[union-attr]
    assert len(code) == 6 and code.isdigit()  # noqa: PT018


def test_students_see_their_own_scores_and_the_report_only_once_published(
    quiz: Setup, client
) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    student = member(quiz.course)
    services.window_set(
        actor=quiz.staff,
        course=quiz.course,
        assessment_id=quiz.assessment.pk,
        phase="pre",
        opens_at=now - dt.timedelta(hours=1),
        closes_at=None,
    )
    client.force_login(student)
    take = f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/take/?phase=pre"
    assert "Research participation notice" in client.get(take).content.decode()
    base = f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/take/"
    client.post(f"{base}start/", {"consent": "on", "phase": "pre"})
    assert "Submit by" in client.get(take).content.decode()
    r = client.post(
        f"{base}submit/",
        {"phase": "pre", "q1": "b", "q2": "a", "q6-0": "40", "q6-1": "100"},
        follow=True,
    )
    assert "Recorded: 4 of 12 points" in r.content.decode()
    rng = random.Random(5)
    _store(quiz, "pre", make_csv([(f"S{i}", answers_for(rng, 0.5)) for i in range(8)]))
    api = APIClient()
    api.force_authenticate(student)
    base = f"/api/v1/courses/{quiz.course.code}/assessments/{quiz.assessment.pk}/"
    mine = api.get(base + "mine/").json()
    assert [(m["phase"], m["total"]) for m in mine] == [("pre", 4.0)]
    assert api.get(base + "report/").status_code == 403
    assert api.get(base + "export/").status_code == 403
    url = f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/"
    page = client.get(url).content.decode()
    assert "<strong>4</strong> points" in page
    assert "matched participants" not in page  # no aggregate before publishing
    services.publish(
        actor=quiz.staff, course=quiz.course, assessment_id=quiz.assessment.pk, published=True
    )
    assert "matched participants" in client.get(url).content.decode()
    assert api.get(base + "report/").json()["counts"]["pre"] == 9
    assert api.get(base + "export/").status_code == 403  # the per-participant file stays with staff


def test_a_students_extended_time_is_their_own_limit_on_the_server(quiz: Setup) -> None:
    """×1.5 on the 5-minute quiz: 7.5 minutes for that student, shown on their start page; an
    answer after that is refused, while a classmate's limit stays 5 minutes."""
    now = _open_pre_now(quiz)
    extended, other, late = member(quiz.course), member(quiz.course), member(quiz.course)
    staff = Client()
    staff.force_login(quiz.staff)
    done = staff.post(
        f"/c/{quiz.course.code}/assessments/extended-time/",
        {"email": extended.email, "multiplier": "1.5", "extra_minutes": "0", "note": "DSP letter"},
        follow=True,
    ).content.decode()
    assert "×1.5 + 0 min" in done
    for s in (late, extended):
        services.accommodation_set(
            actor=quiz.staff,
            course=quiz.course,
            email=s.email,
            multiplier=1.5,
            extra_minutes=0,
            note="",
        )
    page = Client()
    page.force_login(extended)
    take = page.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/take/?phase=pre")
    assert "You have 7.5 minutes" in take.content.decode()
    for s in (extended, other, late):
        _start(quiz, s, "pre")
    aid = quiz.assessment.pk
    with time_machine.travel(now + dt.timedelta(minutes=7, seconds=20)):
        r = services.form_submit(
            actor=extended,
            course=quiz.course,
            assessment_id=aid,
            phase="pre",
            answers={"q1": ["b"]},
        )
        assert r.status == "submitted"
        with pytest.raises(Conflict, match="your limit is 5 minutes"):
            services.form_submit(
                actor=other, course=quiz.course, assessment_id=aid, phase="pre", answers={}
            )
    with (
        time_machine.travel(now + dt.timedelta(minutes=8, seconds=30)),
        pytest.raises(Conflict, match=r"your limit is 7\.5 minutes"),
    ):
        services.form_submit(
            actor=late, course=quiz.course, assessment_id=aid, phase="pre", answers={"q1": ["b"]}
        )
    with pytest.raises(DomainError, match="multiplier is 1 to 4"):
        services.accommodation_set(
            actor=quiz.staff,
            course=quiz.course,
            email=other.email,
            multiplier=9,
            extra_minutes=0,
            note="",
        )


def test_the_report_says_which_rubric_scored_q7(quiz: Setup) -> None:
    rep = report.build(quiz.assessment)
    q7 = rep["rubrics"]["q7"]
    assert q7["rubric"] == "q7-carbon"
    assert q7["unit_slip"] is False  # the seed's rubric, literally; a course may turn it on
    assert "the /1000 left out" in q7["rule"]
    page = Client()
    page.force_login(quiz.staff)
    html = page.get(f"/c/{quiz.course.code}/assessments/{quiz.assessment.pk}/").content.decode()
    assert "q7 (q7-carbon)" in html
