"""A TA taken off the course staff (the roster import makes them a student, or the admin ends
their membership) hands back the written grading they have not done: their ungraded share goes
to the other grader, their pending second gradings are released, what they graded stays with
their name, and `check_course` finds nothing held by someone off staff (`StaffRemoved`,
apps/autograder/handback.py)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from apps.autograder.fairgrading import second_marks_apply, share_of, split_save
from apps.autograder.models import AnswerGrader, RubricMark, SecondMark
from apps.autograder.written import marks_apply
from apps.checkoffs.models import CheckoffSet, CheckoffSlot
from apps.core.errors import NotAllowed
from apps.core.invariants import run_checks
from apps.core.models import AuditEvent, Membership, Role, User
from apps.roster.services import roster_commit, roster_upload
from tests.autograder.splits import answered_by, page_text, signed_in
from tests.factories import UserFactory
from tests.threads import run_at_once

pytestmark = pytest.mark.django_db


text, as_user = page_text, signed_in


@pytest.fixture
def split():  # type: ignore[no-untyped-def]
    """20 answers split between Tess (1–10) and Theo (11–20), 10 graded twice (answers 1, 3 …
    19: Theo second-grades Tess's odd ones, Tess Theo's). Before she leaves, Tess grades her
    answers 1–4 and second-grades 11 and 13; Theo grades 11–13 and second-grades answer 5."""
    course, prof, ta1, ta2, students, qs, q = answered_by(20)
    page_url = f"/c/{course.code}/questions/{qs.key}/written/{q.key}/"
    p = f"split-{q.key}"
    as_user(prof).post(
        f"{page_url}split/",
        {f"{p}-graders": [str(ta1.pk), str(ta2.pk)], f"{p}-ranges": "", f"{p}-overlap": "10"},
    )
    items = {i.key: i for i in q.rubric_items.all()}
    full = [str(items["small-share"].pk), str(items["profile-first"].pk)]

    def mark(ta: User, answer: int, second: bool = False) -> None:
        form = {"students": str(students[answer - 1].pk), "add": full}
        r = as_user(ta).post(f"{page_url}marks/", {**form, **({"second": "1"} if second else {})})
        assert r.status_code == 302

    for answer in (1, 2, 3, 4):
        mark(ta1, answer)
    for answer in (11, 13):
        mark(ta1, answer, second=True)
    for answer in (11, 12, 13):
        mark(ta2, answer)
    mark(ta2, 5, second=True)
    return course, prof, ta1, ta2, students, qs, q, page_url


def _roster(students: list[User], ta1: User) -> bytes:
    lines = ["name,email,sid,role"]
    lines += [f"Student {i},{s.email},,student" for i, s in enumerate(students)]
    lines.append(f"Tess One,{ta1.email},,student")
    return ("\n".join(lines) + "\n").encode()


def test_a_ta_made_a_student_hands_back_their_share_over_http(split) -> None:  # type: ignore[no-untyped-def]
    course, prof, ta1, ta2, students, qs, q, page_url = split
    set_url = f"/c/{course.code}/questions/{qs.key}/"
    before = text(as_user(prof).get(set_url + "?all=1"))
    assert "Tess One: 4 of 10 graded; second grading 2 of 5" in before
    assert "Theo Two: 3 of 10 graded; second grading 1 of 5" in before
    slot_set = CheckoffSet.objects.create(
        course=course, kind=CheckoffSet.Kind.CHECKIN, title="Midterm check-in"
    )
    soon = timezone.now() + dt.timedelta(days=2)
    times = {"starts_at": soon, "ends_at": soon + dt.timedelta(minutes=15)}
    slot = CheckoffSlot.objects.create(set=slot_set, location="521 Cory", staff=ta1, **times)

    # The roster preview says what will happen before anything does.
    upload = SimpleUploadedFile("roster.csv", _roster(students, ta1), content_type="text/csv")
    r = as_user(prof).post(f"/c/{course.code}/roster/", {"file": upload})
    assert r.status_code == 302, text(r)
    preview = re.sub(r"<[^>]+>", "", text(as_user(prof).get(r["Location"])))
    assert "Leaving the course staff" in preview
    assert "Tess One becomes a student." in preview
    assert (
        f"{qs.key} / {q.key}: 6 ungraded answers go to the other graders; 4 they graded keep "
        "their marks; 3 second grading(s) they have not done are released." in preview
    )
    assert "1 checkoff slot(s) to come they run name nobody instead." in preview
    assert AnswerGrader.objects.filter(grader=ta1, second=False).count() == 10  # not yet

    done = as_user(prof).post(r["Location"], follow=True)
    assert "1 updated" in text(done)
    assert Membership.objects.get(user=ta1, course=course).role == Role.STUDENT

    # Theo now holds Tess's six ungraded answers (5–10) besides his own ten; answer 5, which
    # he had already second-graded, counts his marks now.
    mine = text(as_user(ta2).get(page_url))
    assert "your 16 answers" in mine
    assert mine.count("answer-group") == 16
    assert RubricMark.objects.filter(student=students[4], applied_by=ta2).count() == 2
    assert not SecondMark.objects.filter(student=students[4]).exists()

    # Progress per grader adds up to the 20 answers; Tess's graded four keep her name.
    after = text(as_user(prof).get(set_url + "?all=1"))
    assert "Tess One: 4 of 4 graded; second grading 2 of 2" in after
    assert "Theo Two: 4 of 16 graded; second grading 0 of 2" in after
    assert "given to nobody" not in after
    assert RubricMark.objects.filter(applied_by=ta1).count() == 4 * 2
    api = APIClient()
    api.force_authenticate(prof)
    [row] = api.get(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/").json()[
        "splits"
    ]
    assert sum(g["share"] for g in row["graders"]) + row["unassigned"] == 20
    # Her pending second gradings (15, 17, 19: Theo grades those first) were released.
    assert AnswerGrader.objects.filter(grader=ta1, second=True).count() == 2

    # Tess herself can no longer grade; the slot she was to run names nobody.
    assert as_user(ta1).get(page_url).status_code in (403, 404)
    slot.refresh_from_db()
    assert slot.staff is None
    audit = AuditEvent.objects.filter(course=course, action="grading.handed_back").get()
    assert audit.after["event"] == "StaffRemoved"
    assert audit.after["handed"] == {"ta2@uni.edu": 3}
    assert audit.after["promoted"] == 3
    assert audit.after["second_released"] == 3
    assert run_checks(course.pk) == []


def test_the_admin_ending_a_ta_membership_hands_back_too(split) -> None:  # type: ignore[no-untyped-def]
    course, _prof, ta1, ta2, _students, _qs, q, _page_url = split
    root = UserFactory(email="root@uni.edu", is_staff=True, is_superuser=True)
    m = Membership.objects.get(user=ta1, course=course)
    r = as_user(root).post(
        f"/admin/core/membership/{m.pk}/change/",
        {"user": str(ta1.pk), "course": str(course.pk), "role": "ta", "is_active": ""},
    )
    assert r.status_code == 302, text(r)
    assert AnswerGrader.objects.filter(question=q, grader=ta2, second=False).count() == 16
    audit = AuditEvent.objects.get(course=course, action="grading.handed_back")
    assert audit.after["now"] == ""  # she left the course, not just the staff
    assert run_checks(course.pk) == []


def test_the_only_grader_leaving_gives_the_answers_to_nobody(split) -> None:  # type: ignore[no-untyped-def]
    course, prof, ta1, ta2, _students, qs, q, _page_url = split
    root = UserFactory(email="root@uni.edu", is_staff=True, is_superuser=True)
    for ta in (ta1, ta2):
        m = Membership.objects.get(user=ta, course=course)
        r = as_user(root).post(f"/admin/core/membership/{m.pk}/delete/", {"post": "yes"})
        assert r.status_code == 302
    assert (
        not AnswerGrader.objects.filter(question=q, grader=ta2, second=False)
        .exclude(student_id__in=RubricMark.objects.filter(item__question=q).values("student_id"))
        .exists()
    )
    page = text(as_user(prof).get(f"/c/{course.code}/questions/{qs.key}/?all=1"))
    assert "given to nobody (split again)" in page
    assert run_checks(course.pk) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_ta_grading_while_taken_off_staff_is_either_kept_or_refused_never_half() -> None:
    """Real threads: Tess saves marks on her ungraded answers and on her pending second gradings
    while the roster import makes her a student. Whichever goes first, each answer is either
    graded by her (and stays hers) or handed to Theo unmarked; nothing is held by her ungraded."""
    course, prof, ta1, ta2, students, _qs, q = answered_by(20)
    split_save(actor=prof, question=q, grader_ids=[ta1.pk, ta2.pk], overlap=10)
    full = [i.pk for i in q.rubric_items.filter(key__in=["small-share", "profile-first"])]
    first, second = share_of(q, ta1)
    record, _ = roster_upload(
        actor=prof, course=course, filename="roster.csv", data=_roster(students, ta1)
    )
    results = run_at_once(
        [
            lambda: marks_apply(actor=ta1, question=q, student_ids=sorted(first), add=full),
            lambda: second_marks_apply(actor=ta1, question=q, student_ids=sorted(second), add=full),
            lambda: roster_commit(actor=prof, record=record),
        ]
    )
    assert not isinstance(results[2], Exception), results[2]
    for r in results[:2]:
        assert isinstance(r, int | NotAllowed), r
    marked = set(RubricMark.objects.filter(item__question=q).values_list("student_id", flat=True))
    held = AnswerGrader.objects.filter(question=q, second=False)
    assert held.count() == 20  # each answer has its one first grader
    if isinstance(results[0], int):  # her marks went in first: all ten stay hers, graded
        assert set(held.filter(grader=ta1).values_list("student_id", flat=True)) == first
        assert first <= marked
    else:  # refused: her ten went to Theo, with no mark of hers
        assert not held.filter(grader=ta1).exists()
        assert not RubricMark.objects.filter(applied_by=ta1).exists()
    assert Membership.objects.get(user=ta1, course=course).role == Role.STUDENT
    assert run_checks(course.pk) == []
    assert ta2.pk in set(held.values_list("grader_id", flat=True))
