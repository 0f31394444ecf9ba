"""Lecture check-in, as iClicker's Roll Call does it: staff open check-in for a lecture; the room
sees a six-digit code that changes every 30 s (an HMAC of the session's secret and the time
step, so no code is stored and a photo of an old one is useless a minute later); a student types
it on their phone while the session is open and is marked present — once per lecture (a unique
constraint), whatever they or their browser resend. A check-in is the participation app's own
attendance mark, so the score and the exports count it; staff can remove one or record one."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, QuerySet
from django.utils import timezone

from apps.calendar.models import Lecture
from apps.core import doors
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff, is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.participation.models import Checkin, CheckinSession, ParticipationEvent

STEP_S = 30
DIGITS = 6
EARLY = dt.timedelta(minutes=15)  # check-in may open this long before the lecture starts …
LATE = dt.timedelta(minutes=15)  # … and stays open this long after it ends
EXPIRED_STEPS = 10  # a code up to 5 minutes old is "expired", not "wrong"


def code_at(session: CheckinSession, when: dt.datetime) -> str:
    step = int(when.timestamp()) // STEP_S
    mac = hmac.new(session.secret.encode(), f"{session.pk}:{step}".encode(), hashlib.sha256)
    return str(int.from_bytes(mac.digest()[:8], "big") % 10**DIGITS).zfill(DIGITS)


def seconds_left(when: dt.datetime) -> int:
    return STEP_S - int(when.timestamp()) % STEP_S


def _cache_key(course_id: int) -> str:
    return f"checkin-open:{course_id}"


def open_session_id(course: Course) -> int | None:
    """The open session's id, from the cache for up to 30 s (every student's Today reads it;
    opening and closing a session drop it); None when none is open."""
    seconds = min(30, int(getattr(settings, "COURSE_CACHE_SECONDS", 0)))
    if seconds > 0:
        hit = cache.get(_cache_key(course.pk))
        if hit is not None:
            pk, closes = hit
            return pk if pk and closes > timezone.now() else None
    session = open_session(course)
    if seconds > 0:
        value = (session.pk, session.closes_at) if session else (0, timezone.now())
        cache.set(_cache_key(course.pk), value, seconds)
    return session.pk if session else None


def _forget(course_id: int) -> None:
    transaction.on_commit(lambda: cache.delete(_cache_key(course_id)))


def open_session(course: Course, now: dt.datetime | None = None) -> CheckinSession | None:
    now = now or timezone.now()
    return (
        CheckinSession.objects.filter(course=course, opened_at__lte=now, closes_at__gt=now)
        .select_related("lecture")
        .order_by("-opened_at")
        .first()
    )


def session_open(*, actor: User, course: Course, lecture_id: int) -> CheckinSession:
    """Open (or reopen) check-in for a lecture, from 15 minutes before it until 15 after."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff open check-in.")
    lecture = Lecture.objects.filter(course=course, pk=lecture_id).first()
    if lecture is None:
        raise NotFound("No such lecture in this course.", field="lecture")
    now = timezone.now()
    if not lecture.starts_at - EARLY <= now < lecture.ends_at + LATE:
        raise Conflict(
            f"Check-in for L{lecture.number} can be opened from "
            f"{format_instant(lecture.starts_at - EARLY, course.timezone)} until "
            f"{format_instant(lecture.ends_at + LATE, course.timezone)}."
        )
    with transaction.atomic():
        session, made = CheckinSession.objects.select_for_update().get_or_create(
            lecture=lecture,
            defaults={
                "course": course,
                "secret": secrets.token_hex(32),
                "opened_by": actor,
                "opened_at": now,
                "closes_at": lecture.ends_at + LATE,
            },
        )
        if not made:
            session.closes_at = lecture.ends_at + LATE
            session.save(update_fields=["closes_at"])
        audit_record(
            actor=actor,
            action="checkin.opened" if made else "checkin.reopened",
            course=course,
            obj=session,
            after={"lecture": lecture.number, "closes_at": session.closes_at.isoformat()},
        )
        _forget(course.pk)
    return session


def session_close(*, actor: User, course: Course, session_id: int) -> CheckinSession:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff close check-in.")
    with transaction.atomic():
        session = (
            CheckinSession.objects.select_for_update().filter(course=course, pk=session_id).first()
        )
        if session is None:
            raise NotFound("No such check-in session.")
        now = timezone.now()
        if session.closes_at > now:
            session.opened_at = min(session.opened_at, now - dt.timedelta(seconds=1))
            session.closes_at = now
            session.save(update_fields=["opened_at", "closes_at"])
        audit_record(actor=actor, action="checkin.closed", course=course, obj=session)
        _forget(course.pk)
    return session


def check_in(*, actor: User, course: Course, code: str, now: dt.datetime | None = None) -> Checkin:
    """A student enters the code on the screen: refused with the reason when no session is
    open, the code is malformed, expired or wrong, or they are already checked in."""
    if not is_student(actor, course):
        raise NotAllowed("Only the course's students check in.")
    now = now or timezone.now()
    session = open_session(course, now)
    if session is None:
        raise Conflict("No lecture check-in is open now; staff open it in the room.")
    key = tries_key(session, actor)
    if doors.shut_until(doors.CHECKIN_CODE, key, now=now) is not None:
        raise _too_many(session)
    typed = "".join(code.split())
    if not (typed.isdigit() and len(typed) == DIGITS):
        raise DomainError(f"Enter the {DIGITS} digits shown in the room.", field="code")
    step = dt.timedelta(seconds=STEP_S)
    # The code of the step before counts too, so a code typed as it changes on the screen is not
    # refused; with 5 tries per lecture a guesser's chance is 5 × 2 in a million.
    if typed not in {code_at(session, now), code_at(session, now - step)}:
        if any(code_at(session, now - step * k) == typed for k in range(2, EXPIRED_STEPS + 1)):
            raise Conflict(
                "That code has expired: it changes every 30 seconds. Enter the one on the "
                "screen now.",
                field="code",
            )
        _wrong_code(session, actor, now)
        raise DomainError("That is not the code on the screen; check the digits.", field="code")
    lecture = session.lecture
    try:
        with transaction.atomic():
            checkin = Checkin.objects.create(session=session, student=actor, at=now)
            day = timezone.localtime(lecture.starts_at, course.tz).date()
            try:
                with transaction.atomic():  # a staff mark for the day already counts it
                    ParticipationEvent.objects.create(
                        course=course,
                        student=actor,
                        kind="attendance",
                        occurred_on=day,
                        note=f"Checked in to L{lecture.number}",
                        recorded_by=actor,
                    )
            except IntegrityError:
                pass
            audit_record(
                actor=actor,
                action="checkin.checked_in",
                course=course,
                obj=checkin,
                after={"lecture": lecture.number},
            )
    except IntegrityError:
        first = Checkin.objects.filter(session=session, student=actor).first()
        when = format_instant(first.at, course.timezone) if first else "earlier"
        raise Conflict(f"You are already checked in to L{lecture.number} ({when}).") from None
    return checkin


def tries_key(session: CheckinSession, student: User) -> str:
    """The `checkin-code` door's key: one student in one lecture."""
    return f"{session.pk}:{student.pk}"


def _too_many(session: CheckinSession) -> doors.TooManyTries:
    tries = doors.limit_of(doors.CHECKIN_CODE).tries
    return doors.TooManyTries(
        f"You typed {tries} wrong codes for L{session.lecture.number}, so check-in to this "
        "lecture is closed to you. If you are in the room, ask the staff to record your "
        "attendance.",
        until=session.closes_at,
        field="code",
    )


def _wrong_code(session: CheckinSession, student: User, now: dt.datetime) -> None:
    """Count a wrong code on the door and audit it (listed on staff's check-in page), in a
    transaction of its own: the refusal that follows must not undo it."""
    knock = doors.knock(doors.CHECKIN_CODE, tries_key(session, student), now=now)
    with transaction.atomic():
        audit_record(
            actor=student,
            action="checkin.wrong_code",
            course=session.course,
            obj=session,
            after={"lecture": session.lecture.number, "tries": knock.count},
        )


def wrong_tries(session: CheckinSession) -> QuerySet[Any]:
    """Students who typed wrong codes for this session, newest first: their e-mail and name,
    `tries` and `last` (for staff's check-in page, which pages it)."""
    from apps.core.models import AuditEvent

    return (
        AuditEvent.objects.filter(
            action="checkin.wrong_code",
            course_id=session.course_id,
            object_type="participation.checkinsession",
            object_id=str(session.pk),
        )
        .values("actor__email", "actor__full_name")
        .annotate(tries=Count("id"), last=Max("created_at"))
        .order_by("-last", "actor__email")
    )


def checkin_remove(*, actor: User, course: Course, checkin_id: int) -> None:
    """Staff correct a check-in (someone checked in for a friend): the check-in and the
    attendance mark it made go, in one transaction, audited."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff correct check-ins.")
    with transaction.atomic():
        c = (
            Checkin.objects.select_for_update()
            .select_related("session__lecture", "student")
            .filter(session__course=course, pk=checkin_id)
            .first()
        )
        if c is None:
            raise NotFound("No such check-in.")
        lecture = c.session.lecture
        day = timezone.localtime(lecture.starts_at, course.tz).date()
        ParticipationEvent.objects.filter(
            course=course,
            student=c.student,
            kind="attendance",
            occurred_on=day,
            note=f"Checked in to L{lecture.number}",
        ).delete()
        audit_record(
            actor=actor,
            action="checkin.removed",
            course=course,
            obj=c,
            before={"student": c.student.email, "lecture": lecture.number},
        )
        c.delete()
