"""Lab 09 as a student and staff use it, through the API and the pages: a prediction is locked
once (409 the second time), the instrument refuses to open before the lock, the reflection
before the run; the record keeps every step; staff see the predictions against the truth."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import Role
from apps.labs.models import LabRecord, StepRecord
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db
LAB = "lab09-perf-engr"


def _api(user) -> APIClient:  # type: ignore[no-untyped-def]
    c = APIClient()
    c.force_authenticate(user)
    return c


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    return CourseFactory()


def _base(course) -> str:  # type: ignore[no-untyped-def]
    return f"/api/v1/courses/{course.code}/labs/{LAB}/steps/"


def test_lock_once_instrument_after_reflection_last(course) -> None:  # type: ignore[no-untyped-def]
    student = member(course, Role.STUDENT)
    api = _api(student)
    base = _base(course)
    early = api.post(f"{base}1/instrument/", {"inputs": {"k": 3}}, format="json")
    assert early.status_code == 409
    assert "Lock your prediction for step 1 first" in early.json()["detail"]
    assert api.post(f"{base}1/lock/", {"prediction": "Q"}, format="json").status_code == 400
    first = api.post(f"{base}1/lock/", {"prediction": "b"}, format="json")
    assert first.status_code == 201
    assert first.json()["prediction"] == "B"
    again = api.post(f"{base}1/lock/", {"prediction": "A"}, format="json")
    assert again.status_code == 409
    assert "already locked" in again.json()["detail"]
    assert StepRecord.objects.get(number=1).choice == "B"  # unchanged
    assert (
        api.post(f"{base}1/submit/", {"reflection_choice": "A"}, format="json").status_code == 409
    )
    assert api.post(f"{base}2/lock/", {"prediction": "40"}, format="json").status_code == 409
    ran = api.post(
        f"{base}1/instrument/", {"inputs": {"target": "attention", "k": 3}}, format="json"
    )
    assert ran.status_code == 200
    assert round(ran.json()["improvement_pct"], 1) == 8.7
    bad = api.post(f"{base}1/instrument/", {"inputs": {"k": "fast"}}, format="json")
    assert bad.status_code == 400
    assert bad.json()["field"] == "k"
    done = api.post(f"{base}1/submit/", {"reflection_choice": "A"}, format="json")
    assert done.status_code == 200
    assert done.json()["reveal"]["right"] is True
    api.post(f"{base}2/lock/", {"prediction": "30"}, format="json")
    api.post(f"{base}2/instrument/", {}, format="json")
    short = api.post(f"{base}2/submit/", {"reflection_text": "more"}, format="json")
    assert short.status_code == 400
    api.post(
        f"{base}2/submit/",
        {"reflection_text": "AllReduce is 45 % of the step, four times the attention kernel."},
        format="json",
    )
    record = api.get(f"/api/v1/courses/{course.code}/labs/{LAB}/").json()["record"]
    assert [s["number"] for s in record["steps"]] == [1, 2]
    gap = record["steps"][1]["reveal"]
    assert gap["truth"] == pytest.approx(42.857142857, abs=1e-6)
    assert gap["right"] is False


def test_staff_cannot_lock_and_see_the_class_against_the_truth(course) -> None:  # type: ignore[no-untyped-def]
    ta = member(course, Role.TA)
    assert (
        _api(ta).post(f"{_base(course)}1/lock/", {"prediction": "B"}, format="json").status_code
        == 403
    )
    for i, guess in enumerate(["10", "12", "40", "45", "60"]):
        s = member(course, Role.STUDENT)
        api = _api(s)
        api.post(f"{_base(course)}1/lock/", {"prediction": "BDAB"[i % 4]}, format="json")
        api.post(f"{_base(course)}1/instrument/", {}, format="json")
        api.post(f"{_base(course)}1/submit/", {"reflection_choice": "A"}, format="json")
        api.post(f"{_base(course)}2/lock/", {"prediction": guess}, format="json")
    c = Client()
    c.force_login(ta)
    page = c.get(f"/c/{course.code}/labs/{LAB}/").content.decode()
    assert "5 locked" in page
    assert 'class="truth"' in page  # the true value drawn over step 2's histogram
    assert "true 42.9 %" in page
    summary = _api(ta).get(f"/api/v1/courses/{course.code}/labs/{LAB}/").json()["summary"]
    assert summary[0] == {"number": 1, "locked": 5, "submitted": 5}
    csv = b"".join(c.get(f"/c/{course.code}/labs/{LAB}/?format=csv").streaming_content).decode()
    assert csv.count("\n") == 1 + 10


def test_a_student_works_act_ii_on_the_page_and_sees_the_failure_state(course) -> None:  # type: ignore[no-untyped-def]
    student = member(course, Role.STUDENT)
    record = LabRecord.objects.create(course=course, lab_key=LAB, student=student)
    for n in (1, 2):  # Act I done
        StepRecord.objects.create(
            record=record,
            number=n,
            choice="B" if n == 1 else "",
            value=None if n == 1 else 40.0,
            figures={"speedup": 1},
            ran_at="2026-03-01T10:00Z",
            submitted_at="2026-03-01T10:05Z",
        )
    c = Client()
    c.force_login(student)
    lab = f"/c/{course.code}/labs/{LAB}/"
    page = c.get(lab).content.decode()
    assert "Lock my prediction" in page
    assert 'name="microbatches"' not in page  # the instrument stays closed until the lock
    c.post(f"{lab}steps/3/lock/", {"prediction": "B"})
    page = c.get(lab).content.decode()
    assert 'name="microbatches" type="number" value="4"' in page  # pre-filled from the step
    c.post(
        f"{lab}steps/3/run/",
        {"microbatches": "16", "allreduce_compression": "4", "prefetch_workers": "16"},
    )
    page = c.get(lab).content.decode()
    assert "Engineering budget exceeded" in page
    c.post(f"{lab}steps/3/run/", {"microbatches": "16"})
    page = c.get(lab).content.decode()
    assert "Engineering budget exceeded" not in page
    assert "39.44 %" in page
    refused = c.post(f"{lab}steps/3/lock/", {"prediction": "A"}, follow=True).content.decode()
    assert "already locked" in refused


def test_the_course_file_opens_and_closes_a_lab(ee290) -> None:  # type: ignore[no-untyped-def]
    """EE 290 runs Lab 09 from A3's release to its due date: before, a lock is refused with the
    opening time; during, it is accepted; after, refused with the closing time, the page still
    readable."""
    import datetime as dt

    import time_machine

    from apps.labs.models import CourseLab

    window = CourseLab.objects.get(course=ee290, lab_key=LAB)
    assert window.opens_at == dt.datetime(2026, 2, 24, 8, 0, tzinfo=dt.UTC)  # 00:00 PST
    assert window.closes_at == dt.datetime(2026, 3, 11, 6, 59, tzinfo=dt.UTC)  # 23:59 PDT
    student = member(ee290, Role.STUDENT)
    api = _api(student)
    url = f"{_base(ee290)}1/lock/"
    with time_machine.travel(dt.datetime(2026, 2, 20, 12, tzinfo=dt.UTC)):
        early = api.post(url, {"prediction": "B"}, format="json")
        assert early.status_code == 409
        assert "opens Tue Feb 24, 2026, 12:00 AM PST" in early.json()["detail"]
    with time_machine.travel(dt.datetime(2026, 3, 2, 18, tzinfo=dt.UTC)):
        assert api.post(url, {"prediction": "B"}, format="json").status_code == 201
    late = api.post(f"{_base(ee290)}2/lock/", {"prediction": "40"}, format="json")
    assert late.status_code == 409
    assert "closed Tue Mar 10, 2026, 11:59 PM PDT" in late.json()["detail"]
    c = Client()
    c.force_login(student)
    page = c.get(f"/c/{ee290.code}/labs/{LAB}/")
    assert page.status_code == 200
    assert "Open for predictions and reflections" in page.content.decode()


def test_a_course_file_naming_an_unknown_lab_is_refused_whole(course_file_text) -> None:  # type: ignore[no-untyped-def]
    from apps.core.coursefile import CourseFileError, parse_course_file
    from apps.setup.course_loader import course_load

    bad = course_file_text.replace("key: lab09-perf-engr", "key: lab99-nothing")
    with pytest.raises(CourseFileError, match="no lab 'lab99-nothing'"):
        course_load(cf=parse_course_file(bad))
    backwards = course_file_text.replace(
        "opens: 2026-02-24, closes: 2026-03-10", "opens: 2026-03-24, closes: 2026-03-10"
    )
    with pytest.raises(CourseFileError, match=r"labs\[0\].closes: must be after opens"):
        parse_course_file(backwards)


def test_a_closed_lab_scores_the_steps_each_student_submitted(ee290) -> None:  # type: ignore[no-untyped-def]
    """The gradebook's `labs` source: once Lab 09's window has closed, a student who submitted
    all four steps has 100 %, one who did two 50 %, one who never opened it 0 %."""
    from apps.gradebook.sources import source_for
    from apps.labs.models import LabRecord, StepRecord

    done, half, none = (member(ee290, Role.STUDENT) for _ in range(3))
    for student, steps in ((done, 4), (half, 2)):
        rec = LabRecord.objects.create(course=ee290, lab_key=LAB, student=student)
        for n in range(1, steps + 1):
            StepRecord.objects.create(
                record=rec,
                number=n,
                choice="B" if n in (1, 3) else "",
                value=None if n in (1, 3) else 40.0,
                ran_at="2026-03-05T10:00Z",
                submitted_at="2026-03-05T10:05Z",
            )
    labs = source_for("labs")
    scores = labs(ee290, [done.pk, half.pk, none.pk], {})  # type: ignore[misc]
    assert scores[done.pk].percent == 100
    assert scores[half.pk].percent == 50
    assert scores[none.pk].percent == 0
    assert scores[half.pk].detail == "lab09-perf-engr 2 of 4 steps"


def test_the_labs_numbers_are_a_bank_graded_per_student(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """The demo loads Lab 09's bank; each student gets their own profile, the key is the
    calculator's Amdahl, and the lab page links to it."""
    from apps.autograder.models import QuestionSet
    from apps.autograder.services import instance_for
    from apps.core.models import User

    qs = QuestionSet.objects.get(course=ee290_demo, key="lab09-numbers")
    q = qs.questions.get(key="speedup")
    a = User.objects.get(email="student01@example.edu")
    ia = instance_for(q, a)
    f, k = ia.params["f_pct"] / 100, ia.params["k"]
    assert ia.keys[0] == pytest.approx(1 / ((1 - f) + f / k), rel=1e-12)
    drawn = {
        tuple(sorted(instance_for(q, u).params.items()))
        for u in User.objects.filter(email__startswith="student")
    }
    assert len(drawn) > 5  # the students' profiles differ
    c = Client()
    c.force_login(a)
    page = c.get(f"/c/{ee290_demo.code}/labs/{LAB}/").content.decode()
    assert f'href="/c/{ee290_demo.code}/questions/lab09-numbers/"' in page


def test_a_refused_prediction_is_tied_to_its_field_on_the_page(course) -> None:  # type: ignore[no-untyped-def]
    """Step 2 asks for a number: "forty-ish" comes back with the input aria-invalid, described
    by the error beside it, what was typed still in it, and the summary linking to it."""
    import re

    student = member(course, Role.STUDENT)
    api = _api(student)
    api.post(f"{_base(course)}1/lock/", {"prediction": "B"}, format="json")
    api.post(f"{_base(course)}1/instrument/", {}, format="json")
    api.post(f"{_base(course)}1/submit/", {"reflection_choice": "A"}, format="json")
    c = Client()
    c.force_login(student)
    page = c.post(
        f"/c/{course.code}/labs/{LAB}/steps/2/lock/", {"prediction": "forty-ish"}, follow=True
    ).content.decode()
    field = re.search(r'<input id="pred-2"[^>]*>', page).group(0)
    assert 'aria-invalid="true"' in field
    assert 'aria-describedby="pred-2-error pred-2-help"' in field
    assert 'value="forty-ish"' in field
    assert re.search(r'id="pred-2-error">.*is not a number', page)
    assert '<a href="#pred-2">' in page
    assert not StepRecord.objects.filter(number=2).exists()
    assert 'aria-invalid="true"' not in c.get(f"/c/{course.code}/labs/{LAB}/").content.decode()
