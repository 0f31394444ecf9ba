"""Pre/post writes: assessments, the timed in-app form (consent first, the limit enforced here),
CSV imports (previewed, then committed all or nothing), publishing, destroying the ID map."""

from __future__ import annotations

import datetime as dt
import secrets
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.assessments import intake
from apps.assessments.models import (
    Administration,
    Assessment,
    IdentityLink,
    Participant,
    Response,
    ResponseImport,
    TimeAccommodation,
)
from apps.autograder.models import Question, QuestionSet
from apps.autograder.services import score_raw
from apps.core.csvfile import refuse_unreadable
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, Role, User
from apps.core.permissions import is_instructor, is_staff, is_student
from apps.core.services import audit_record
from apps.core.timefmt import format_instant

GRACE = dt.timedelta(seconds=10)  # network and clicking time past the limit, never more
MAX_UPLOAD = 5_000_000


def get(course: Course, assessment_id: int) -> Assessment:
    a = (
        Assessment.objects.filter(course=course, pk=assessment_id)
        .select_related("question_set")
        .first()
    )
    if a is None:
        raise NotFound("No such assessment.")
    return a


def questions_of(a: Assessment) -> list[Question]:
    return list(a.question_set.questions.order_by("position"))


def _staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only course staff can do this.")


def create(
    *,
    actor: User,
    course: Course,
    question_set_id: int,
    title: str = "",
    time_limit_minutes: int = 5,
    windows: dict[str, tuple[dt.datetime | None, dt.datetime | None]] | None = None,
) -> Assessment:
    _staff(actor, course)
    qs = QuestionSet.objects.filter(course=course, pk=question_set_id).first()
    if qs is None:
        raise DomainError("Choose one of the course's question sets.", field="question_set")
    drawn = [
        q.key
        for q in qs.questions.all()
        if any(isinstance(v, dict) for v in (q.params or {}).values())
    ]
    if drawn:
        raise DomainError(
            f"A pre/post quiz needs the same questions for everyone; {', '.join(drawn)} draw "
            "per-student numbers.",
            field="question_set",
        )
    if not 1 <= time_limit_minutes <= 180:
        raise DomainError("The time limit is 1 to 180 minutes.", field="time_limit_minutes")
    with transaction.atomic():
        a = Assessment.objects.create(
            course=course,
            question_set=qs,
            title=(title or f"{qs.title}: pre/post").strip()[:200],
            time_limit_minutes=time_limit_minutes,
        )
        for phase in Administration.Phase.values:
            opens, closes = (windows or {}).get(phase, (None, None))
            if opens and closes and closes <= opens:
                raise DomainError(
                    f"The {phase} form must close after it opens.", field=f"{phase}_closes_at"
                )
            Administration.objects.create(
                assessment=a, phase=phase, opens_at=opens, closes_at=closes
            )
        audit_record(actor=actor, action="assessments.create", course=course, obj=a)
    return a


def window_set(
    *,
    actor: User,
    course: Course,
    assessment_id: int,
    phase: str,
    opens_at: dt.datetime | None,
    closes_at: dt.datetime | None,
) -> Administration:
    _staff(actor, course)
    a = get(course, assessment_id)
    if phase not in Administration.Phase.values:
        raise DomainError("The phase is pre or post.", field="phase")
    if opens_at and closes_at and closes_at <= opens_at:
        raise DomainError("The form must close after it opens.", field="closes_at")
    with transaction.atomic():
        adm = Administration.objects.select_for_update().get(assessment=a, phase=phase)
        adm.opens_at, adm.closes_at = opens_at, closes_at
        adm.save(update_fields=["opens_at", "closes_at"])
        audit_record(
            actor=actor,
            action="assessments.window",
            course=course,
            obj=adm,
            after={"opens_at": str(opens_at), "closes_at": str(closes_at)},
        )
    return adm


# ------------------------------------------------------------------ the timed form


def _new_code(a: Assessment) -> str:
    taken = set(Participant.objects.filter(assessment=a).values_list("code", flat=True))
    while True:
        code = f"{secrets.randbelow(900_000) + 100_000}"
        if code not in taken:
            return code


def participant_for(a: Assessment, user: User, *, create: bool) -> Participant | None:
    link = (
        IdentityLink.objects.filter(participant__assessment=a, user=user)
        .select_related("participant")
        .first()
    )
    if link or not create:
        return link.participant if link else None
    for _ in range(5):
        try:
            with transaction.atomic():
                p = Participant.objects.create(assessment=a, code=_new_code(a))
                IdentityLink.objects.create(participant=p, user=user)
                return p
        except IntegrityError:
            continue
    raise Conflict("Could not assign a participant ID; try again.")


def _open(adm: Administration, now: dt.datetime) -> None:
    tz = adm.assessment.course.timezone
    if adm.opens_at is None or now < adm.opens_at:
        raise Conflict(
            "This quiz is not open yet."
            + (f" It opens {format_instant(adm.opens_at, tz)}." if adm.opens_at else "")
        )
    if adm.closes_at and now > adm.closes_at:
        raise Conflict(f"This quiz closed {format_instant(adm.closes_at, tz)}.")


def form_start(
    *,
    actor: User,
    course: Course,
    assessment_id: int,
    phase: str,
    consent: bool,
    no_research: bool,
    now: dt.datetime | None = None,
) -> Response:
    """The consent notice acknowledged, the clock starts (on the server). Opening the form again
    resumes the same attempt with the same clock."""
    now = now or timezone.now()
    if not is_student(actor, course):
        raise NotAllowed("Only the course's students take the quiz.")
    a = get(course, assessment_id)
    adm = (
        Administration.objects.filter(assessment=a, phase=phase)
        .select_related("assessment__course")
        .first()
    )
    if adm is None:
        raise NotFound("No such administration.")
    if a.identities_destroyed_at:
        raise Conflict(
            "The participant-ID map of this assessment was destroyed; the in-app form is closed."
        )
    if not consent:
        raise DomainError(
            "Read the research notice and tick that you have, to start.", field="consent"
        )
    _open(adm, now)
    with transaction.atomic():
        participant = participant_for(a, actor, create=True)
        if participant is None:  # create=True always returns one
            raise Conflict("Could not assign a participant ID; try again.")
        response, created = Response.objects.get_or_create(
            administration=adm,
            participant=participant,
            defaults={
                "status": Response.Status.STARTED,
                "source": "form",
                "started_at": now,
                "opted_out": no_research,
                "limit_seconds": limit_for(a, actor),
            },
        )
        if not created and response.status != Response.Status.STARTED:
            raise Conflict(
                f"You have already taken the {phase} quiz."
                if response.status == Response.Status.SUBMITTED
                else "Your attempt ran past the time limit and was not recorded."
            )
    return response


def limit_for(a: Assessment, student: User) -> int:
    """The student's own time limit on this assessment, in seconds: the limit × their
    accommodation's multiplier + its extra minutes."""
    acc = TimeAccommodation.objects.filter(course_id=a.course_id, student=student).first()
    base = a.time_limit_minutes * 60
    if acc is None:
        return base
    return round(base * float(acc.multiplier)) + acc.extra_minutes * 60


def limit_minutes(response: Response) -> float:
    seconds = response.limit_seconds or response.administration.assessment.time_limit_minutes * 60
    return seconds / 60


def deadline_of(response: Response) -> dt.datetime:
    started = response.started_at or timezone.now()
    return started + dt.timedelta(minutes=limit_minutes(response))


def accommodation_set(
    *, actor: User, course: Course, email: str, multiplier: float, extra_minutes: int, note: str
) -> TimeAccommodation | None:
    """Staff give a student extended time on timed assessments (multiplier 1 and 0 extra
    minutes removes it). Applies to attempts started from now on."""
    _staff(actor, course)
    student = User.objects.filter(
        email__iexact=email.strip(),
        memberships__course=course,
        memberships__role=Role.STUDENT,
    ).first()
    if student is None:
        raise DomainError(f"{email.strip()!r} is not a student of this course.", field="email")
    if not 1 <= multiplier <= 4:
        raise DomainError("The multiplier is 1 to 4 (1.5 = time and a half).", field="multiplier")
    if not 0 <= extra_minutes <= 120:
        raise DomainError("Extra minutes are 0 to 120.", field="extra_minutes")
    with transaction.atomic():
        if multiplier == 1 and extra_minutes == 0:
            TimeAccommodation.objects.filter(course=course, student=student).delete()
            audit_record(
                actor=actor, action="assessments.extended_time_removed", course=course, obj=student
            )
            return None
        acc, _ = TimeAccommodation.objects.update_or_create(
            course=course,
            student=student,
            defaults={
                "multiplier": Decimal(str(multiplier)),
                "extra_minutes": extra_minutes,
                "note": note.strip()[:200],
            },
        )
        audit_record(
            actor=actor,
            action="assessments.extended_time",
            course=course,
            obj=acc,
            after={"student": student.email, "multiplier": multiplier, "extra": extra_minutes},
        )
    return acc


def form_submit(
    *,
    actor: User,
    course: Course,
    assessment_id: int,
    phase: str,
    answers: dict[str, list[str]],
    now: dt.datetime | None = None,
) -> Response:
    now = now or timezone.now()
    a = get(course, assessment_id)
    participant = participant_for(a, actor, create=False)
    with transaction.atomic():
        response = (
            Response.objects.select_for_update()
            .select_related("administration__assessment__course")
            .filter(
                administration__assessment=a, administration__phase=phase, participant=participant
            )
            .first()
        )
        if participant is None or response is None:
            raise Conflict("Start the quiz first.")
        if response.status != Response.Status.STARTED:
            raise Conflict("This attempt is already closed.")
        limit = deadline_of(response)
        if now > limit + GRACE:
            response.status = Response.Status.LATE
            response.submitted_at = now
            response.save(update_fields=["status", "submitted_at"])
            late = Conflict(
                f"Time is up: you started at "
                f"{format_instant(response.started_at or now, course.timezone)} "
                f"and your limit is {limit_minutes(response):g} minutes, so answers sent at "
                f"{format_instant(now, course.timezone)} are not recorded."
            )
        else:
            late = None
            _score_into(response, questions_of(a), answers)
            response.status, response.submitted_at = Response.Status.SUBMITTED, now
            response.save()
    if late:
        raise late
    return response


def _clean(questions: list[Question], answers: dict[str, list[str]]) -> dict[str, list[str]]:
    out = {}
    for q in questions:
        given = [str(x)[:500] for x in (answers.get(q.key) or [])]
        out[q.key] = (given + [""] * max(len(q.parts), 1))[: max(len(q.parts), 1)]
    return out


def _score_into(
    response: Response, questions: list[Question], answers: dict[str, list[str]]
) -> None:
    response.answers = _clean(questions, answers)
    response.scores = score_raw(questions, [response.answers])[0]
    response.total = sum(s["points"] for s in response.scores.values())


# ------------------------------------------------------------------ CSV imports


def import_preview(
    *, actor: User, course: Course, assessment_id: int, phase: str, filename: str, data: bytes
) -> ResponseImport:
    _staff(actor, course)
    a = get(course, assessment_id)
    if phase not in Administration.Phase.values:
        raise DomainError("Say which administration the file is: pre or post.", field="phase")
    refuse_unreadable(data, max_bytes=MAX_UPLOAD)
    parsed = intake.parse(data, questions_of(a))
    existing = set(Participant.objects.filter(assessment=a).values_list("code", flat=True))
    replaced = set(
        Response.objects.filter(
            administration__assessment=a, administration__phase=phase
        ).values_list("participant__code", flat=True)
    )
    report = parsed.summary() | {
        "new_ids": len({r.code for r in parsed.rows} - existing),
        "replaces": len({r.code for r in parsed.rows} & replaced),
    }
    with transaction.atomic():
        return ResponseImport.objects.create(
            assessment=a,
            phase=phase,
            filename=filename[:200],
            data=data,
            report=report,
            uploaded_by=actor,
        )


def import_commit(
    *, actor: User, course: Course, assessment_id: int, import_id: int
) -> ResponseImport:
    """Store the previewed file: all its rows, or — if any row has a problem — nothing."""
    _staff(actor, course)
    a = get(course, assessment_id)
    with transaction.atomic():
        imp = ResponseImport.objects.select_for_update().filter(assessment=a, pk=import_id).first()
        if imp is None:
            raise NotFound("No such import.")
        if imp.committed_at:
            raise Conflict("This file is already stored.")
        questions = questions_of(a)
        parsed = intake.parse(bytes(imp.data), questions)
        if parsed.problems:
            raise Conflict(
                f"Nothing was stored: the file has {len(parsed.problems)} problem(s), the first: "
                f"{parsed.problems[0]}."
            )
        adm = Administration.objects.get(assessment=a, phase=imp.phase)
        have = {
            p.code: p
            for p in Participant.objects.filter(
                assessment=a, code__in=[r.code for r in parsed.rows]
            )
        }
        Participant.objects.bulk_create(
            [Participant(assessment=a, code=c) for c in {r.code for r in parsed.rows} - set(have)]
        )
        have = {
            p.code: p
            for p in Participant.objects.filter(
                assessment=a, code__in=[r.code for r in parsed.rows]
            )
        }
        scored = score_raw(questions, [_clean(questions, r.answers) for r in parsed.rows])
        now = timezone.now()
        Response.objects.filter(administration=adm, participant__in=list(have.values())).delete()
        Response.objects.bulk_create(
            [
                Response(
                    administration=adm,
                    participant=have[r.code],
                    status=Response.Status.SUBMITTED,
                    source="csv",
                    opted_out=r.opted_out,
                    submitted_at=now,
                    answers=_clean(questions, r.answers),
                    scores=s,
                    total=sum(x["points"] for x in s.values()),
                )
                for r, s in zip(parsed.rows, scored, strict=True)
            ],
            batch_size=2000,
        )
        imp.committed_at = now
        imp.save(update_fields=["committed_at"])
        audit_record(
            actor=actor,
            action="assessments.import",
            course=course,
            obj=a,
            after={"phase": imp.phase, "rows": len(parsed.rows)},
        )
    return imp


# ------------------------------------------------------------------ staff


def publish(*, actor: User, course: Course, assessment_id: int, published: bool) -> Assessment:
    _staff(actor, course)
    with transaction.atomic():
        a = Assessment.objects.select_for_update().get(pk=get(course, assessment_id).pk)
        a.published_at = (a.published_at or timezone.now()) if published else None
        a.save(update_fields=["published_at"])
        audit_record(
            actor=actor,
            action="assessments.publish",
            course=course,
            obj=a,
            after={"published": published},
        )
    return a


def identities_destroy(*, actor: User, course: Course, assessment_id: int, confirm: bool) -> int:
    """Delete the participant-ID → person map for good (instructors). Scores and analytics stay;
    students can no longer see their own scores here, and the in-app form closes."""
    if not is_instructor(actor, course):
        raise NotAllowed("Only an instructor can destroy the ID map.")
    if not confirm:
        raise Conflict("Destroying the ID map cannot be undone; confirm to go ahead.")
    with transaction.atomic():
        a = Assessment.objects.select_for_update().get(pk=get(course, assessment_id).pk)
        n, _ = IdentityLink.objects.filter(participant__assessment=a).delete()
        a.identities_destroyed_at = a.identities_destroyed_at or timezone.now()
        a.save(update_fields=["identities_destroyed_at"])
        audit_record(
            actor=actor,
            action="assessments.identities_destroy",
            course=course,
            obj=a,
            after={"links": n},
        )
    return n


def own_responses(a: Assessment, user: User) -> list[Response]:
    p = participant_for(a, user, create=False)
    if p is None:
        return []
    return list(
        Response.objects.filter(participant=p)
        .select_related("administration")
        .order_by("administration__phase")
    )


def answers_from_post(questions: list[Question], data: Any) -> dict[str, list[str]]:
    """The form's fields (q1, q6-0, q6-1 …) as {question key: [raw per part]}."""
    out: dict[str, list[str]] = {}
    for q in questions:
        n = max(len(q.parts), 1)
        out[q.key] = [
            str(data.get(q.key if q.kind == Question.Kind.CHOICE else f"{q.key}-{i}", "") or "")
            for i in range(n)
        ]
    return out
