"""Scribing the way staff and students use it: preferences, solve, adjust, publish (80 duties for
the demo course), notes and review, swaps (one winner under concurrency), pages and API."""

from __future__ import annotations

import re
import threading
from collections import Counter

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from apps.calendar.models import Lecture
from apps.core.errors import Conflict, DomainError
from apps.core.models import Membership, Role
from apps.scribing import services
from apps.scribing.models import ScribeDuty, ScribeSwap

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("before_term")]


def _people(course):  # type: ignore[no-untyped-def]
    staff = Membership.objects.filter(course=course, role=Role.INSTRUCTOR).first().user
    students = services.active_students(course)
    return staff, students


def _api(user) -> APIClient:  # type: ignore[no-untyped-def]
    c = APIClient()
    c.force_authenticate(user)
    return c


def test_demo_course_solve_and_publish_gives_80_duties_that_keep_every_rule(
    ee290_demo, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    assert len(students) == 40
    assert Lecture.objects.filter(course=course).count() == 26
    first = students[0]
    lecs = [lec for lec, _ in services.eligible_lectures(course)]
    r = _api(first).put(
        f"/api/v1/courses/{course.code}/scribing/preferences/",
        {"cannot": [lecs[0].pk], "prefer": [lecs[5].pk, lecs[12].pk], "group_mode": "spread"},
        format="json",
    )
    assert r.status_code == 200, r.content
    solved = _api(staff).post(f"/api/v1/courses/{course.code}/scribing/solve/").json()
    assert solved["ok"] is True
    assert solved["optimal"] is True
    assert solved["score"] == 3 + 2  # both of the only wishes in the course
    with django_capture_on_commit_callbacks(execute=True):
        published = _api(staff).post(f"/api/v1/courses/{course.code}/scribing/publish/").json()
    assert published == {"created": 80}
    duties = _api(staff).get(f"/api/v1/courses/{course.code}/scribing/duties/?page_size=100").json()
    assert duties["count"] == 80
    per_student = Counter(d["student"] for d in duties["results"])
    assert set(per_student.values()) == {2}
    loads = Counter(d["lecture"] for d in duties["results"])
    assert max(loads.values()) - min(loads.values()) <= 1
    days = {lec.pk: lec.starts_at for lec in lecs}
    for s in per_student:
        a, b = sorted(days[d["lecture"]] for d in duties["results"] if d["student"] == s)
        assert (b - a).days >= 7
    assert not [
        d for d in duties["results"] if d["student"] == first.pk and d["lecture"] == lecs[0].pk
    ]
    assert len(mail.outbox) == 40  # each student told their lectures
    # Each notes deadline in the e-mail is course time with its zone, as on the pages.
    assert re.search(
        r"notes due \w{3} \w{3} \d+, \d{4}, \d+:\d\d [AP]M P[SD]T", mail.outbox[0].body
    )
    mine = _api(first).get(f"/api/v1/courses/{course.code}/scribing/duties/").json()
    assert mine["count"] == 2
    # once published, everyone sees who scribes which lecture
    listing = _api(students[1]).get(f"/api/v1/courses/{course.code}/scribing/lectures/").json()
    assert sum(len(x["scribes"]) for x in listing) == 80


def test_an_impossible_instance_is_refused_with_a_sentence(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    lecs = [lec for lec, _ in services.eligible_lectures(course)]
    # every student leaves only the first two lectures, two days apart
    for s in students:
        services.preferences_save(
            student=s, course=course, cannot=[lec.pk for lec in lecs[2:]], prefer=[]
        )
    r = _api(staff).post(f"/api/v1/courses/{course.code}/scribing/solve/").json()
    assert r["ok"] is False
    assert r["assignment"] == []
    name = students[0].full_name or students[0].email
    assert (
        f"{name}'s available lectures (lecture 1, lecture 2) are not 7 days apart" in r["reasons"]
    )
    with pytest.raises(Conflict, match="Solve first"):
        services.publish(actor=staff, course=course)


def test_preferences_are_checked_and_close_at_publication(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    lecs = [lec for lec, _ in services.eligible_lectures(course)]
    s = students[0]
    with pytest.raises(DomainError, match="at most 3"):
        services.preferences_save(
            student=s, course=course, cannot=[], prefer=[x.pk for x in lecs[:4]]
        )
    with pytest.raises(DomainError, match="both wanted and impossible"):
        services.preferences_save(
            student=s, course=course, cannot=[lecs[0].pk], prefer=[lecs[0].pk]
        )
    with pytest.raises(DomainError, match="Leave at least 2"):
        services.preferences_save(
            student=s, course=course, cannot=[x.pk for x in lecs[1:]], prefer=[]
        )
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    with pytest.raises(Conflict, match="already posted"):
        services.preferences_save(student=s, course=course, cannot=[], prefer=[])


def test_staff_move_is_rechecked_and_names_the_rule(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, _students = _people(course)
    services.solve(actor=staff, course=course)
    plan = services.plan_for(course)
    s, lid = plan.proposal[0]
    other = next(x for x in Lecture.objects.filter(course=course) if x.pk != lid)
    with pytest.raises(DomainError, match=r"Not moved: .*scribe"):
        services.proposal_move(
            actor=staff, course=course, student_id=s, from_lecture=lid, to_lecture=other.pk
        )


def test_notes_submission_review_and_late_list(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    s = students[0]
    duty = ScribeDuty.objects.filter(student=s).first()
    api = _api(s)
    bad = api.post(
        f"/api/v1/courses/{course.code}/scribing/duties/{duty.pk}/submit/",
        {"link": "https://github.com/x/pull/1", "declaration": "  "},
        format="json",
    )
    assert bad.status_code == 400
    ok = api.post(
        f"/api/v1/courses/{course.code}/scribing/duties/{duty.pk}/submit/",
        {"link": "https://github.com/x/pull/1", "declaration": "ChatGPT for the outline"},
        format="json",
    )
    assert ok.json()["status"] == "submitted"
    other = ScribeDuty.objects.exclude(student=s).first()
    assert (
        api.post(
            f"/api/v1/courses/{course.code}/scribing/duties/{other.pk}/submit/",
            {"link": "https://x.org", "declaration": "none"},
            format="json",
        ).status_code
        == 404
    )
    assert (
        api.post(
            f"/api/v1/courses/{course.code}/scribing/duties/{duty.pk}/review/",
            {"accept": True},
            format="json",
        ).status_code
        == 403
    )
    staff_api = _api(staff)
    revise = staff_api.post(
        f"/api/v1/courses/{course.code}/scribing/duties/{duty.pk}/review/",
        {"accept": False},
        format="json",
    )
    assert revise.status_code == 400  # a revision needs feedback
    done = staff_api.post(
        f"/api/v1/courses/{course.code}/scribing/duties/{duty.pk}/review/",
        {"accept": True, "feedback": "Clear derivations."},
        format="json",
    )
    assert done.json()["status"] == "accepted"


def test_a_swap_is_checked_accepted_and_can_be_reverted(
    ee290_demo, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    days = {lec.pk: lec.starts_at for lec in Lecture.objects.filter(course=course)}
    a = students[0]
    mine = list(ScribeDuty.objects.filter(student=a).order_by("lecture__starts_at"))
    # find a classmate whose duty can trade with a's first duty while keeping both spacings
    for b in students[1:]:
        for theirs in ScribeDuty.objects.filter(student=b):
            a_after = sorted([days[theirs.lecture_id], days[mine[1].lecture_id]])
            b_after = sorted(
                [days[mine[0].lecture_id]]
                + [
                    days[d.lecture_id]
                    for d in ScribeDuty.objects.filter(student=b)
                    if d.pk != theirs.pk
                ]
            )
            if (
                (a_after[1] - a_after[0]).days >= 7
                and (b_after[1] - b_after[0]).days >= 7
                and theirs.lecture_id not in (mine[0].lecture_id, mine[1].lecture_id)
            ):
                break
        else:
            continue
        break
    swap = services.swap_propose(
        proposer=a, course=course, duty_id=mine[0].pk, other_email=b.email, other_duty_id=theirs.pk
    )
    with django_capture_on_commit_callbacks(execute=True):
        r = _api(b).post(
            f"/api/v1/courses/{course.code}/scribing/swaps/{swap.pk}/decide/",
            {"action": "accept"},
            format="json",
        )
    assert r.status_code == 200, r.content
    assert mail.outbox[-1].subject.endswith("Scribe swap accepted")
    assert staff.email in mail.outbox[-1].to  # staff are told
    assert ScribeDuty.objects.get(pk=mine[0].pk).student_id == b.pk
    assert ScribeDuty.objects.get(pk=theirs.pk).student_id == a.pk
    again = _api(b).post(
        f"/api/v1/courses/{course.code}/scribing/swaps/{swap.pk}/decide/",
        {"action": "accept"},
        format="json",
    )
    assert again.status_code == 409
    assert (
        _api(a)
        .post(
            f"/api/v1/courses/{course.code}/scribing/swaps/{swap.pk}/decide/",
            {"action": "revert"},
            format="json",
        )
        .status_code
        == 403
    )
    _api(staff).post(
        f"/api/v1/courses/{course.code}/scribing/swaps/{swap.pk}/decide/",
        {"action": "revert"},
        format="json",
    )
    assert ScribeDuty.objects.get(pk=mine[0].pk).student_id == a.pk


def test_a_swap_that_breaks_spacing_is_refused(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    a = students[0]
    mine = list(ScribeDuty.objects.filter(student=a).order_by("lecture__starts_at"))
    keep = Lecture.objects.get(pk=mine[1].lecture_id)
    near = (
        ScribeDuty.objects.exclude(student=a)
        .filter(lecture__number__in=[keep.number - 1, keep.number + 1])
        .first()
    )
    with pytest.raises(Conflict, match="days apart"):
        services.swap_propose(
            proposer=a,
            course=course,
            duty_id=mine[0].pk,
            other_email=near.student.email,
            other_duty_id=near.pk,
        )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_students_accepting_the_same_duty_at_once_one_wins(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    a = students[0]
    duty = ScribeDuty.objects.filter(student=a).order_by("lecture__starts_at").first()
    days = {lec.pk: lec.starts_at for lec in Lecture.objects.filter(course=course)}
    takers = [
        s
        for s in students[1:]
        if all(
            abs((days[d.lecture_id] - days[duty.lecture_id]).days) >= 7
            for d in ScribeDuty.objects.filter(student=s)
        )
    ][:2]
    assert len(takers) == 2
    swaps = [
        services.swap_propose(
            proposer=a, course=course, duty_id=duty.pk, other_email=t.email, other_duty_id=None
        )
        for t in takers
    ]
    barrier = threading.Barrier(2)
    outcomes: list[object] = []

    def run(swap: ScribeSwap, who) -> None:  # type: ignore[no-untyped-def]
        connection.ensure_connection()
        barrier.wait()
        try:
            outcomes.append(
                services.swap_decide(actor=who, course=course, swap_id=swap.pk, accept=True)
            )
        except Exception as exc:
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(s, t)) for s, t in zip(swaps, takers, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    wins = [o for o in outcomes if isinstance(o, ScribeSwap)]
    losses = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(wins) == 1
    assert len(losses) == 1
    assert "changed hands" in str(losses[0])
    assert ScribeDuty.objects.get(pk=duty.pk).student_id == wins[0].other_id


def test_pages_for_students_and_staff(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    c = Client()
    c.force_login(students[0])
    page = c.get(f"/c/{course.code}/scribing/").content.decode()
    assert "Preferences" in page
    assert "cannot take" in page
    lecs = [lec for lec, _ in services.eligible_lectures(course)]
    r = c.post(
        f"/c/{course.code}/scribing/preferences/",
        {f"lec-{lecs[3].pk}": "1", f"lec-{lecs[0].pk}": "cannot"},
    )
    assert r.status_code == 302
    s = Client()
    s.force_login(staff)
    r = s.post(f"/c/{course.code}/scribing/solve/", follow=True)
    html = r.content.decode()
    assert "Preference score 3" in html
    assert "proven optimal" in html
    assert "Scribes per lecture" in html
    r = s.post(f"/c/{course.code}/scribing/publish/", follow=True)
    assert "Tick the box to confirm" in r.content.decode()
    r = s.post(f"/c/{course.code}/scribing/publish/", {"confirm": "yes"}, follow=True)
    assert "Published: 80 duties created" in r.content.decode()
    csv = b"".join(s.get(f"/c/{course.code}/scribing/?format=csv").streaming_content).decode()
    assert csv.count("\n") == 81
    mine = c.get(f"/c/{course.code}/scribing/").content.decode()
    assert "Submit notes" in mine
    assert "Who scribes what" in mine


def test_a_large_course_is_solved_by_a_worker_and_polled(
    ee290_demo, settings, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    settings.SCRIBING_INLINE_MAX_STUDENTS = 10  # the demo's 40 students count as "large" here
    course = ee290_demo
    staff, _ = _people(course)
    api = _api(staff)
    assert api.get(f"/api/v1/courses/{course.code}/scribing/solve/").json()["status"] == "none"
    with django_capture_on_commit_callbacks(execute=False) as queued:
        r = api.post(f"/api/v1/courses/{course.code}/scribing/solve/")
    assert r.status_code == 202
    assert r.json()["status"] == "solving"
    assert (
        api.post(f"/api/v1/courses/{course.code}/scribing/solve/").status_code == 409
    )  # one at a time
    c = Client()
    c.force_login(staff)
    assert "Solving on a worker" in c.get(f"/c/{course.code}/scribing/").content.decode()
    for callback in queued:
        callback()  # the worker (eager here) runs the solve
    done = api.get(f"/api/v1/courses/{course.code}/scribing/solve/").json()
    assert done["status"] == "done"
    assert done["ok"] is True
    assert len(done["assignment"]) == 80


def test_a_student_who_drops_and_one_who_joins_late_are_handled_by_re_solving(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    before = {d.pk: (d.student_id, d.lecture_id) for d in ScribeDuty.objects.filter(course=course)}
    gone = students[0]
    Membership.objects.filter(course=course, user=gone).update(is_active=False)
    for d in ScribeDuty.objects.filter(course=course, student=gone):
        services.release(actor=staff, course=course, duty_id=d.pk)
    late = Membership.objects.create(
        course=course,
        user=type(gone).objects.create_user(
            email="late@example.edu", password="x-123456789", full_name="Late Joiner"
        ),
        role=Role.STUDENT,
    ).user
    result = services.solve(actor=staff, course=course)
    assert result.ok, result.reasons
    created = services.publish(actor=staff, course=course)
    assert created == 2
    after = {d.pk: (d.student_id, d.lecture_id) for d in ScribeDuty.objects.filter(course=course)}
    kept = {pk: v for pk, v in before.items() if v[0] != gone.pk}
    assert all(after[pk] == v for pk, v in kept.items())  # nobody else's duty moved
    assert ScribeDuty.objects.filter(student=late).count() == 2


def test_staff_set_the_rules_in_course_time_and_the_deadline_closes_preferences(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    course = ee290_demo
    staff, students = _people(course)
    c = Client()
    c.force_login(staff)
    r = c.post(
        f"/c/{course.code}/scribing/plan/",
        {
            "per_student": "2",
            "min_gap_days": "7",
            "notes_due_days": "5",
            "max_preferences": "2",
            "preferences_due_at": "2026-01-20T23:59",
            "seed": "9",
        },
        follow=True,
    )
    assert "Scribing rules saved" in r.content.decode()
    plan = services.plan_for(course)
    assert plan.preferences_due_at == dt.datetime(2026, 1, 21, 7, 59, tzinfo=dt.UTC)  # 23:59 PST
    assert 'value="2026-01-20T23:59"' in r.content.decode()
    assert (plan.notes_due_days, plan.max_preferences, plan.seed) == (5, 2, 9)
    services.preferences_save(student=students[0], course=course, cannot=[], prefer=[])
    with pytest.raises(Conflict, match="deadline has passed"):
        services.preferences_save(
            student=students[0],
            course=course,
            cannot=[],
            prefer=[],
            now=dt.datetime(2026, 1, 21, 8, 0, tzinfo=dt.UTC),
        )
    bad = c.post(
        f"/c/{course.code}/scribing/plan/",
        {"preferences_due_at": "next week"},
        follow=True,
    )
    assert "Give the deadline as a date and time" in bad.content.decode()


def test_a_notes_link_that_is_no_public_web_address_is_refused_at_its_field(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Staff click the notes link: a script, an intranet host or 5,000 characters never get
    there. The page's form took any text (the last answered 500: the column holds 500); the
    API's serializer already refused them."""
    course = ee290_demo
    staff, students = _people(course)
    services.solve(actor=staff, course=course)
    services.publish(actor=staff, course=course)
    duty = ScribeDuty.objects.filter(student=students[0]).first()
    c = Client()
    c.force_login(students[0])
    url = f"/c/{course.code}/scribing/duties/{duty.pk}/submit/"
    for link, says in [
        ("javascript:alert(document.cookie)", "must start with https://"),
        ("https://intranet/notes", "not a public host name"),
        ("https://github.com/" + "x" * 5000, "longer than 500 characters"),
        ("", "Give the link to your notes"),
    ]:
        page = c.post(url, {"link": link, "declaration": "none"}, follow=True)
        assert page.status_code == 200, link
        assert says in page.content.decode(), link
    duty.refresh_from_db()
    assert (duty.status, duty.link) == ("assigned", "")


def test_lecture_settings_are_saved_all_or_none_and_a_bad_number_is_named(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    from apps.scribing.models import ScribeLecture

    course = ee290_demo
    staff, _ = _people(course)
    c = Client()
    c.force_login(staff)
    lectures = list(Lecture.objects.filter(course=course).order_by("number")[:3])
    before = list(ScribeLecture.objects.filter(course=course).values_list("lecture", "needed"))
    for typed, says in [("two", "“two” is not a whole number"), ("9" * 25, "from 0 to 1000")]:
        data = {f"needed-{lec.pk}": "3" for lec in lectures[:2]} | {
            f"needed-{lectures[2].pk}": typed
        }
        page = c.post(f"/c/{course.code}/scribing/lectures/", data, follow=True)
        assert page.status_code == 200
        assert f"Scribes needed for L{lectures[2].number}" in page.content.decode()
        assert says in page.content.decode()
        after = ScribeLecture.objects.filter(course=course).values_list("lecture", "needed")
        assert list(after) == before  # the first two were not saved either
