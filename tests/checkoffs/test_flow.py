"""Checkoffs as staff and groups use them: book (e-mail with a calendar file, the feed with the
room), one place per sign-up, move, cancel, the cut-off, capacity, outcomes and redo, deleting a
booked slot, previews that name clashes, reminders to groups that have not booked; API and pages."""

from __future__ import annotations

import datetime as dt

import icalendar
import pytest
import time_machine
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from apps.calendar.services import calendar_feed_get_or_create
from apps.checkoffs import services
from apps.checkoffs.models import Booking, CheckoffSlot
from apps.core.errors import Conflict, DomainError, NotFound
from tests.checkoffs.conftest import Signup, make_signup

pytestmark = pytest.mark.django_db


def _api(user) -> APIClient:  # type: ignore[no-untyped-def]
    c = APIClient()
    c.force_authenticate(user)
    return c


def _counts(s: Signup) -> list[int]:
    return [CheckoffSlot.objects.get(pk=x.pk).booked for x in s.slots]


def test_a_member_books_for_the_group_everyone_gets_an_ics_and_the_feed_shows_the_room(
    signup: Signup, sent
) -> None:  # type: ignore[no-untyped-def]
    s = signup
    with sent():
        b = services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    assert b.group == s.groups[0]
    assert _counts(s) == [1, 0, 0]
    assert len(mail.outbox) == 4  # every member of the group
    msg = mail.outbox[0]
    assert "A1 checkoff" in msg.subject
    assert "521 Cory Hall" in msg.body
    name, content, mimetype = msg.attachments[0]
    assert name == "checkoff.ics"
    assert mimetype.startswith("text/calendar")
    event = icalendar.Calendar.from_ical(content).walk("VEVENT")[0]
    assert str(event["LOCATION"]) == "521 Cory Hall"
    # the same UID is in each member's personal feed, with the room
    for k in range(4):
        row = calendar_feed_get_or_create(actor=s.student(0, k), course=s.course)
        cal = icalendar.Calendar.from_ical(Client().get(f"/feeds/{row.feed_token}.ics").content)
        mine = [e for e in cal.walk("VEVENT") if str(e["UID"]) == str(event["UID"])]
        assert len(mine) == 1
        assert str(mine[0]["LOCATION"]) == "521 Cory Hall"
    # another group's member does not get it
    row = calendar_feed_get_or_create(actor=s.student(1), course=s.course)
    other = icalendar.Calendar.from_ical(Client().get(f"/feeds/{row.feed_token}.ics").content)
    assert str(event["UID"]) not in {str(e["UID"]) for e in other.walk("VEVENT")}


def test_one_place_per_sign_up_then_move_frees_the_old_slot(signup: Signup, sent) -> None:  # type: ignore[no-untyped-def]
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(
        Conflict, match=r"already holds the .* slot at 521 Cory Hall for A1 checkoff"
    ):
        services.book(actor=s.student(0, 1), course=s.course, slot_id=s.slots[1].pk)
    with pytest.raises(Conflict, match="already holds"):
        services.book(actor=s.student(0, 1), course=s.course, slot_id=s.slots[0].pk)
    with sent():
        moved = services.book(
            actor=s.student(0, 1), course=s.course, slot_id=s.slots[1].pk, move=True
        )
    assert _counts(s) == [0, 1, 0]
    assert Booking.objects.filter(group=s.groups[0], cancelled_at__isnull=True).get() == moved
    assert "moved" in mail.outbox[-1].subject


def test_a_full_slot_refuses_the_next_group_naming_the_slot(signup: Signup) -> None:
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(Conflict, match=r"slot at 521 Cory Hall is full \(1 of 1 place taken\)"):
        services.book(actor=s.student(1), course=s.course, slot_id=s.slots[0].pk)
    assert _counts(s) == [1, 0, 0]


def test_after_the_cutoff_book_move_and_cancel_are_refused_with_the_cutoff_in_course_time(
    signup: Signup,
) -> None:
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)

    def cutoff_text(slot: CheckoffSlot) -> str:
        local = slot.starts_at.astimezone(s.course.tz) - dt.timedelta(hours=2)
        return f"{local:%a %b} {local.day}, {local.year}, {local.strftime('%I').lstrip('0')}:{local:%M %p} {local.tzname()}"

    start = s.slots[0].starts_at
    with time_machine.travel(
        start - dt.timedelta(hours=1), tick=False
    ):  # every slot's cut-off has passed
        for call, slot in (
            (
                lambda: services.cancel(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk),
                s.slots[0],
            ),
            (
                lambda: services.book(
                    actor=s.student(0), course=s.course, slot_id=s.slots[2].pk, move=True
                ),
                s.slots[2],
            ),
            (
                lambda: services.book(actor=s.student(1), course=s.course, slot_id=s.slots[1].pk),
                s.slots[1],
            ),
        ):
            with pytest.raises(Conflict) as err:
                call()
            assert cutoff_text(slot) in err.value.message
            assert "(2 h before it starts)" in err.value.message
    with time_machine.travel(
        start - dt.timedelta(hours=2, seconds=1), tick=False
    ):  # a second before: still open
        services.cancel(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    assert _counts(s) == [0, 0, 0]


def test_cancel_frees_the_place_and_tells_the_group(signup: Signup, sent) -> None:  # type: ignore[no-untyped-def]
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with sent():
        services.cancel(actor=s.student(0, 2), course=s.course, slot_id=s.slots[0].pk)
    assert _counts(s) == [0, 0, 0]
    assert len(mail.outbox) == 4
    assert "cancelled" in mail.outbox[0].subject
    with pytest.raises(NotFound, match="no booking"):
        services.cancel(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    services.book(
        actor=s.student(1), course=s.course, slot_id=s.slots[0].pk
    )  # the place is free again


def test_a_student_without_a_group_or_an_unpublished_set_cannot_book(signup: Signup) -> None:
    from tests.factories import member

    s = signup
    loner = member(s.course)
    with pytest.raises(DomainError, match="member of a group"):
        services.book(actor=loner, course=s.course, slot_id=s.slots[0].pk)
    services.set_publish(actor=s.ta, course=s.course, set_id=s.set.pk, published=False)
    with pytest.raises(NotFound):
        services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)


def test_outcomes_pass_needs_presence_and_a_redo_lets_the_group_book_again(
    signup: Signup, sent
) -> None:  # type: ignore[no-untyped-def]
    s = signup
    b = services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(DomainError, match="has not started yet"):  # a day early: nothing kept
        services.record(
            actor=s.ta, course=s.course, booking_id=b.pk, attendance="present", outcome="passed"
        )
    b.refresh_from_db()
    assert (b.attendance, b.outcome) == ("", "")
    noted = services.record(  # a note alone may be written before the slot
        actor=s.ta, course=s.course, booking_id=b.pk, attendance="", notes="bring the logs"
    )
    assert noted.notes == "bring the logs"
    with time_machine.travel(s.slots[0].starts_at + dt.timedelta(minutes=1), tick=False):
        with pytest.raises(DomainError, match="only when present"):
            services.record(
                actor=s.ta, course=s.course, booking_id=b.pk, attendance="no-show", outcome="passed"
            )
        with pytest.raises(DomainError, match="Only course staff"):
            services.record(
                actor=s.student(1), course=s.course, booking_id=b.pk, attendance="present"
            )
        with sent():
            services.record(
                actor=s.ta,
                course=s.course,
                booking_id=b.pk,
                attendance="present",
                outcome="redo",
                notes="Throughput numbers did not match the log.",
            )
        assert "book again" in mail.outbox[0].subject
        assert "did not match" in mail.outbox[0].body
    again = services.book(
        actor=s.student(0, 1), course=s.course, slot_id=s.slots[2].pk
    )  # no move needed
    assert again.pk != b.pk
    with (
        time_machine.travel(s.slots[2].starts_at, tick=False),
        pytest.raises(Conflict, match="has booked again since the redo"),
    ):
        services.record(
            actor=s.ta, course=s.course, booking_id=b.pk, attendance="present", outcome="passed"
        )
    with time_machine.travel(s.slots[2].starts_at + dt.timedelta(minutes=1), tick=False):
        passed = services.record(
            actor=s.ta, course=s.course, booking_id=again.pk, attendance="present", outcome="passed"
        )
    assert passed.outcome == "passed"
    assert passed.recorded_by == s.ta
    with pytest.raises(Conflict, match="already holds"):  # passed still holds the place
        services.book(actor=s.student(0), course=s.course, slot_id=s.slots[1].pk)


def test_deleting_a_booked_slot_asks_first_then_emails_the_group(signup: Signup, sent) -> None:  # type: ignore[no-untyped-def]
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(Conflict, match="booked by Team 1; confirm"):
        services.slot_delete(actor=s.ta, course=s.course, slot_id=s.slots[0].pk)
    assert CheckoffSlot.objects.filter(pk=s.slots[0].pk).exists()
    with sent():
        assert (
            services.slot_delete(actor=s.ta, course=s.course, slot_id=s.slots[0].pk, confirm=True)
            == 1
        )
    assert not CheckoffSlot.objects.filter(pk=s.slots[0].pk).exists()
    assert len(mail.outbox) == 4
    assert "removed" in mail.outbox[0].subject
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[1].pk)  # free to book again


def test_a_day_of_slots_previews_clashes_and_creates_all_or_nothing(signup: Signup) -> None:
    s = signup
    day = s.slots[0].starts_at.astimezone(s.course.tz).date()
    start = s.slots[0].starts_at.astimezone(s.course.tz).time()
    plans = services.slots_plan(
        course=s.course,
        day=day,
        start=(dt.datetime.combine(day, start) - dt.timedelta(minutes=30)).time(),
        end=(dt.datetime.combine(day, start) + dt.timedelta(minutes=30)).time(),
        minutes=15,
        location="521 cory hall",
    )
    assert [bool(p.clash) for p in plans] == [
        False,
        False,
        True,
        True,
    ]  # the last two overlap the existing slots
    assert "is already there then" in plans[2].clash
    before = CheckoffSlot.objects.count()
    with pytest.raises(Conflict, match="Nothing was created"):
        services.slots_create(actor=s.ta, course=s.course, set_id=s.set.pk, plans=plans)
    assert CheckoffSlot.objects.count() == before
    # same times in another room, run by someone else: fine; run by the same TA: a clash named
    other = services.slots_plan(
        course=s.course,
        day=day,
        start=start,
        end=(dt.datetime.combine(day, start) + dt.timedelta(minutes=30)).time(),
        minutes=15,
        location="Soda 510",
        staff_id=s.ta.pk,
    )
    assert all("Tara Assistant runs" in p.clash for p in other)
    elsewhere = services.slots_plan(
        course=s.course,
        day=day,
        start=start,
        end=(dt.datetime.combine(day, start) + dt.timedelta(minutes=30)).time(),
        minutes=15,
        location="Soda 510",
    )
    assert (
        len(services.slots_create(actor=s.ta, course=s.course, set_id=s.set.pk, plans=elsewhere))
        == 2
    )


def test_reminders_reach_only_unbooked_groups_once_per_ten_minutes(signup: Signup, sent) -> None:  # type: ignore[no-untyped-def]
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with sent():
        assert services.remind(actor=s.ta, course=s.course, set_id=s.set.pk) == 2
    to = {m.to[0] for m in mail.outbox}
    assert len(to) == 8
    assert s.student(0).email not in to
    assert s.student(1).email in to
    with pytest.raises(Conflict, match="wait 10 minutes"):
        services.remind(actor=s.ta, course=s.course, set_id=s.set.pk)


# ------------------------------------------------------------------ API


def test_api_book_cancel_and_refusals(signup: Signup) -> None:
    s = signup
    base = f"/api/v1/courses/{s.course.code}/checkoffs/"
    a, b, ta = _api(s.student(0)), _api(s.student(1)), _api(s.ta)
    r = a.post(f"{base}slots/{s.slots[0].pk}/book/", {}, format="json")
    assert r.status_code == 201
    assert r.json()["location"] == "521 Cory Hall"
    assert r.json()["holds"]
    r = b.post(f"{base}slots/{s.slots[0].pk}/book/", {}, format="json")
    assert r.status_code == 409
    assert "slot at 521 Cory Hall is full" in r.json()["detail"]
    assert b.post(f"{base}slots/{s.slots[0].pk}/cancel/").status_code == 404  # not B's to cancel
    assert ta.post(f"{base}slots/{s.slots[0].pk}/book/", {}, format="json").status_code == 403
    mine = a.get(f"{base}bookings/").json()
    assert mine["count"] == 1
    assert mine["results"][0]["group_name"] == "Team 1"
    assert (
        b.get(f"{base}bookings/").json()["count"] == 0
    )  # never another group's booking or outcome
    slots = b.get(f"{base}sets/{s.set.pk}/slots/?free=1").json()
    assert [x["id"] for x in slots["results"]] == [s.slots[1].pk, s.slots[2].pk]
    assert all("group" not in x for x in slots["results"])
    booking = mine["results"][0]["id"]
    noted = ta.post(  # a note before the slot, no outcome yet: staff see it, the group not yet
        f"{base}bookings/{booking}/outcome/", {"attendance": "", "notes": "bring logs"}, "json"
    )
    assert noted.json()["notes"] == "bring logs"
    assert ta.get(f"{base}bookings/").json()["results"][0]["notes"] == "bring logs"
    assert a.get(f"{base}bookings/").json()["results"][0]["notes"] == ""
    assert [x["booking"]["notes"] for x in a.get(f"{base}sets/").json()] == [""]
    assert (
        b.post(
            f"{base}bookings/{booking}/outcome/", {"attendance": "present"}, format="json"
        ).status_code
        == 403
    )
    with time_machine.travel(s.slots[0].starts_at + dt.timedelta(minutes=5), tick=False):
        r = ta.post(
            f"{base}bookings/{booking}/outcome/",
            {"attendance": "present", "outcome": "passed", "notes": "good"},
            format="json",
        )
    assert r.status_code == 200
    assert r.json()["outcome"] == "passed"
    assert a.get(f"{base}bookings/").json()["results"][0]["notes"] == "good"
    assert ta.get(f"{base}bookings/?outcome=passed").json()["count"] == 1
    assert ta.get(f"{base}bookings/?outcome=maybe").status_code == 400


def test_api_staff_create_a_set_preview_then_create_a_day_and_delete_with_confirm(
    signup: Signup,
) -> None:
    s = signup
    base = f"/api/v1/courses/{s.course.code}/checkoffs/"
    ta = _api(s.ta)
    r = ta.post(
        f"{base}sets/", {"kind": "checkin", "title": "Midterm check-in meetings"}, format="json"
    )
    assert r.status_code == 201
    sid = r.json()["id"]
    body = {
        "day": "2030-03-19",
        "start": "10:00",
        "end": "12:00",
        "minutes": 20,
        "break_start": "11:00",
        "break_end": "11:20",
        "location": "Cory 258",
        "staff": s.ta.pk,
    }
    r = ta.post(f"{base}sets/{sid}/slots/", {**body, "preview": True}, format="json")
    assert r.status_code == 200
    assert not r.json()["created"]
    assert len(r.json()["slots"]) == 5
    assert CheckoffSlot.objects.filter(set_id=sid).count() == 0
    r = ta.post(f"{base}sets/{sid}/slots/", body, format="json")
    assert r.status_code == 201
    assert CheckoffSlot.objects.filter(set_id=sid).count() == 5
    assert (
        ta.post(f"{base}sets/{sid}/slots/", body, format="json").status_code == 409
    )  # the same again clashes
    bad = ta.post(f"{base}sets/{sid}/slots/", {"location": "x", "day": "2030-03-19"}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) >= {"start", "end", "minutes"}
    assert ta.post(f"{base}sets/", {"kind": "assignment"}, format="json").status_code == 400
    # delete a booked slot: 409 without confirm, then done
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    assert ta.delete(f"{base}slots/{s.slots[0].pk}/").status_code == 409
    r = ta.delete(f"{base}slots/{s.slots[0].pk}/?confirm=true")
    assert r.status_code == 200
    assert r.json()["groups_emailed"] == 1
    assert ta.get(f"{base}sets/{s.set.pk}/unbooked/").json()["count"] == 3


# ------------------------------------------------------------------ pages


def test_student_page_books_only_after_confirming_and_shows_the_week(signup: Signup) -> None:
    s = signup
    c = Client()
    c.force_login(s.student(0))
    url = f"/c/{s.course.code}/checkoffs/"
    page = c.get(url).content.decode()
    assert "<svg" in page
    assert "1 free" in page
    assert "not booked" in page
    assert "<strong>2:00 PM</strong>–2:15 PM" in page  # course time, not the server's UTC
    book = f"{url}slots/{s.slots[0].pk}/book/"
    r = c.post(book, {"set": s.set.pk}, follow=True)
    assert "Confirm the change first" in r.content.decode()
    assert _counts(s) == [0, 0, 0]
    confirm = c.get(f"{url}?set={s.set.pk}&confirm={s.slots[0].pk}").content.decode()
    assert "Book for your whole group" in confirm
    r = c.post(book, {"set": s.set.pk, "confirm": "yes"}, follow=True)
    assert "Booked: A1 checkoff" in r.content.decode()
    assert _counts(s) == [1, 0, 0]
    page = r.content.decode()
    assert "Your group is booked" in page
    assert "Move here" in page


def test_staff_pages_preview_create_schedule_record_and_export(signup: Signup) -> None:
    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    c = Client()
    c.force_login(s.ta)
    url = f"/c/{s.course.code}/checkoffs/"
    page = c.get(
        f"{url}?set={s.set.pk}&plan=1&day=2030-04-30&start=09:30&end=11:00&minutes=15&location=521+Cory+Hall&capacity=1"
    ).content.decode()
    assert "6 slots" in page
    assert "Create 6 slots" in page
    r = c.post(
        f"{url}sets/{s.set.pk}/slots/create/",
        {
            "day": "2030-04-30",
            "start": "09:30",
            "end": "11:00",
            "minutes": "15",
            "location": "521 Cory Hall",
            "capacity": "1",
        },
        follow=True,
    )
    assert "6 slots created" in r.content.decode()
    r = c.post(
        f"{url}sets/{s.set.pk}/slots/create/",
        {
            "day": "2030-04-30",
            "start": "11:00",
            "end": "10:00",
            "minutes": "15",
            "location": "521 Cory Hall",
        },
        follow=True,
    )
    assert "must end after it starts" in r.content.decode()
    day = s.slots[0].starts_at.astimezone(s.course.tz).date().isoformat()
    sched = c.get(f"{url}schedule/?date={day}").content.decode()
    assert "Team 1" in sched
    assert "<svg" in sched
    assert "521 Cory Hall" in sched
    booking = Booking.objects.get(group=s.groups[0])
    outcome = {
        "booking": booking.pk,
        "attendance": "present",
        "outcome": "passed",
        "notes": "clear",
        "date": day,
    }
    early = c.post(f"{url}schedule/", outcome, follow=True).content.decode()
    assert "This checkoff has not started yet" in early
    with time_machine.travel(booking.slot.starts_at + dt.timedelta(minutes=5), tick=False):
        r = c.post(f"{url}schedule/", outcome, follow=True)
    assert "Team 1: present, passed" in r.content.decode()
    csv = b"".join(c.get(f"{url}schedule/?date={day}&format=csv").streaming_content).decode()
    assert "Team 1" in csv
    assert "passed" in csv
    board = c.get(f"{url}outcomes/?set={s.set.pk}&status=unbooked").content.decode()
    assert "Team 2" in board
    assert "Team 1" not in board.split("<tbody>")[-1]
    out = b"".join(c.get(f"{url}outcomes/?format=csv").streaming_content).decode()
    assert out.splitlines()[0].startswith("group,set,starts")
    assert "Team 1,A1 checkoff" in out


def test_a_student_cannot_open_the_staff_pages(signup: Signup) -> None:
    c = Client()
    c.force_login(signup.student(0))
    assert c.get(f"/c/{signup.course.code}/checkoffs/schedule/").status_code == 403
    assert c.get(f"/c/{signup.course.code}/checkoffs/outcomes/").status_code == 403


def test_capacity_three_takes_three_groups() -> None:
    s = make_signup(n_groups=4, capacity=3)
    for i in range(3):
        services.book(actor=s.student(i), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(Conflict, match=r"full \(3 of 3 places taken\)"):
        services.book(actor=s.student(3), course=s.course, slot_id=s.slots[0].pk)


def test_reminders_go_to_a_booked_groups_members_before_the_slot_and_to_unbooked_groups_before_book_by(
    signup: Signup,
) -> None:
    from apps.checkoffs.sources import booking_reminders

    s = signup
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    start = s.slots[0].starts_at
    window = (start - dt.timedelta(hours=1), start + dt.timedelta(minutes=1))
    got = booking_reminders(s.course, *window)
    assert {u for u, _ in got} == {m.user_id for m in s.groups[0].memberships.all()}
    assert all(e.location == "521 Cory Hall" and e.reminder_kind == "duty" for _, e in got)
    s.set.book_by = start - dt.timedelta(days=1)
    s.set.save()
    due = booking_reminders(
        s.course, s.set.book_by - dt.timedelta(hours=1), s.set.book_by + dt.timedelta(minutes=1)
    )
    users = {u for u, _ in due}
    assert users == {m.user_id for g in s.groups[1:] for m in g.memberships.all()}
    assert all(e.title == "Book a slot: A1 checkoff" for _, e in due)


def test_implausible_dates_are_refused_by_name_not_crashed_on(signup: Signup) -> None:
    s = signup
    base = f"/api/v1/courses/{s.course.code}/checkoffs/"
    ta = _api(s.ta)
    r = ta.post(
        f"{base}sets/{s.set.pk}/slots/",
        {
            "day": "9999-12-31",
            "start": "22:00",
            "end": "23:59",
            "minutes": 15,
            "location": "Cory 258",
            "preview": True,
        },
        format="json",
    )
    assert r.status_code == 400
    assert r.json()["field"] == "day"
    r = ta.post(
        f"{base}sets/{s.set.pk}/slots/",
        {
            "starts_at": "0001-01-01T00:30:00Z",
            "ends_at": "0001-01-01T00:45:00Z",
            "location": "Cory 258",
        },
        format="json",
    )
    assert r.status_code == 400
    assert ta.get(f"{base}bookings/?date=9999-12-31").status_code == 400
    c = Client()
    c.force_login(s.ta)
    assert c.get(f"/c/{s.course.code}/checkoffs/?set={s.set.pk}&week=9999-12-31").status_code == 200
    assert c.get(f"/c/{s.course.code}/checkoffs/schedule/?date=9999-12-31").status_code == 200
    r = c.post(
        f"/c/{s.course.code}/checkoffs/sets/{s.set.pk}/slot/create/",
        {
            "starts_at": "9999-12-31T23:59",
            "minutes": "15",
            "location": "Cory 258",
        },
        follow=True,
    )
    assert "Give the slot&#x27;s start as a date and time" in r.content.decode()


def test_the_dashboard_says_what_to_book_then_when_and_where_the_group_is_booked(db) -> None:  # type: ignore[no-untyped-def]
    """The panel and the calendar's book-by deadline read the same rows: before booking both say
    "book"; after, the panel shows the slot's room and the deadline is gone for that group only;
    a group with no open slot left is not told to book on the panel (its deadline stays)."""
    from apps.calendar.selectors import deadline_list

    s = make_signup(n_groups=4)
    s.set.book_by = s.slots[0].starts_at - dt.timedelta(days=1)
    s.set.save()

    def panel(i: int) -> str:
        c = Client()
        c.force_login(s.student(i))
        return c.get(f"/c/{s.course.code}/").content.decode()

    def must_book(i: int) -> bool:
        return "Book a slot: A1 checkoff" in [
            d.title for d in deadline_list(course=s.course, user=s.student(i))
        ]

    assert "Not booked yet" in panel(0)
    assert must_book(0)
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[1].pk)
    page = panel(0)
    assert "Not booked yet" not in page
    assert "521 Cory Hall" in page
    assert not must_book(0)
    assert must_book(1)
    services.book(actor=s.student(1), course=s.course, slot_id=s.slots[0].pk)
    assert "Not booked yet" in panel(3)  # one slot left
    services.book(actor=s.student(2), course=s.course, slot_id=s.slots[2].pk)
    page = panel(3)
    assert "Not booked yet" not in page
    assert "Nothing booked or to book" in page
    assert must_book(3)


def test_slots_that_would_start_in_the_past_are_refused_with_the_time(signup: Signup) -> None:
    """Nobody can book a slot that has begun: a day already past, or this morning's hours this
    afternoon, is refused before anything is created, naming when the first slot would start."""
    s = signup
    base = f"/api/v1/courses/{s.course.code}/checkoffs/"
    ta = _api(s.ta)
    sid = ta.post(f"{base}sets/", {"kind": "checkin", "title": "Check-ins"}, format="json")
    sid = sid.json()["id"]
    body = {"start": "10:00", "end": "11:00", "minutes": 20, "location": "Cory 258"}
    with time_machine.travel(dt.datetime(2030, 3, 19, 20, 0, tzinfo=dt.UTC), tick=False):
        # 13:00 in Berkeley on 19 March 2030: yesterday and this morning are over.
        past_day = ta.post(f"{base}sets/{sid}/slots/", {**body, "day": "2030-03-18"}, format="json")
        assert past_day.status_code == 400
        assert past_day.json()["field"] == "day"
        assert "cannot start in the past" in past_day.json()["detail"]
        assert "Mon Mar 18, 2030, 10:00 AM PDT" in past_day.json()["detail"]
        this_morning = ta.post(
            f"{base}sets/{sid}/slots/", {**body, "day": "2030-03-19"}, format="json"
        )
        assert this_morning.status_code == 400
        assert this_morning.json()["field"] == "start"
        later = ta.post(
            f"{base}sets/{sid}/slots/",
            {**body, "day": "2030-03-19", "start": "14:00", "end": "15:00"},
            format="json",
        )
        assert later.status_code == 201
        assert CheckoffSlot.objects.filter(set_id=sid).count() == 3


def test_an_all_day_session_is_offered_by_its_date_not_as_midnight(signup: Signup) -> None:
    """The poster session is a bare date in the course file: "Tue May 5 (all day)", not 12:00 AM."""
    from apps.calendar.models import CourseEvent

    course = signup.course
    day = dt.datetime(2026, 5, 5, tzinfo=course.tz)
    CourseEvent.objects.create(
        course=course,
        key="poster-session",
        name="Poster session",
        kind="session",
        starts_at=day,
        ends_at=day + dt.timedelta(days=1),
        all_day=True,
    )
    c = Client()
    c.force_login(signup.ta)
    page = c.get(f"/c/{course.code}/checkoffs/").content.decode()
    assert "Poster session · Tue May 5 (all day)</option>" in page
    assert "12:00 AM" not in page
