"""Onboarding e-mails, sent by a worker after the change commits: an enrollment decision, and
the reminder to students who have not answered the questionnaire."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from apps.core import outbox
from apps.core.models import Course, User
from apps.core.timefmt import format_instant
from apps.onboarding.models import EnrollmentDecision, Questionnaire
from apps.onboarding.services import suggestion_accept_run, suggestion_crashed, suggestion_run

TEXT = {
    "admitted": "You are admitted to {course}. Welcome! Group formation closes with the course's "
    "group-formation milestone.",
    "waitlisted": "You are on the waitlist for {course}. We will write again as soon as a place "
    "opens.",
    "declined": "We are sorry: we cannot offer you a place in {course} this term.",
}


@shared_task(name="onboarding.email_decision")
def email_decision(decision_id: int) -> int:
    d = (
        EnrollmentDecision.objects.select_related("course", "student")
        .filter(pk=decision_id)
        .first()
    )
    if d is None:
        return 0
    body = TEXT[d.decision].format(course=f"{d.course.number or d.course.code} {d.course.title}")
    if d.note:
        body += f"\n\nA note from the course staff: {d.note}"
    mail = outbox.Mail(
        [d.student.email], f"[{d.course.code}] Enrollment: {d.get_decision_display().lower()}", body
    )
    outbox.post("onboarding.email_decision", [mail], course_id=d.course_id)
    return 1


@shared_task(name="onboarding.email_reminders")
def email_reminders(course_id: int, student_ids: list[int]) -> int:
    course = Course.objects.get(pk=course_id)
    q = Questionnaire.objects.filter(course=course).first()
    if q is None:
        return 0
    url = f"{settings.SITE_URL}/c/{course.code}/questionnaire/"
    closes = format_instant(q.closes_at, course.timezone)
    messages = [
        outbox.Mail(
            [email],
            f"[{course.code}] Please answer the onboarding questionnaire",
            f"We have not had your answers to {q.title} yet. It takes five minutes and decides "
            "enrollment, compute and suggested project groups. Answer (and change) it until "
            f"{closes}: {url}",
        )
        for email in User.objects.filter(pk__in=student_ids).values_list("email", flat=True)
    ]
    outbox.post("onboarding.email_reminders", messages, course_id=course.pk)
    return len(messages)


@shared_task(name="onboarding.suggest")
def suggest(suggestion_id: int) -> str:
    """A large pool's group suggestion, off the web request (services.suggestion_run)."""
    try:
        return suggestion_run(suggestion_id)
    except Exception as exc:  # ended now with the error, not by the sweeper minutes later
        suggestion_crashed(suggestion_id, f"{type(exc).__name__}: {exc}")
        raise


@shared_task(name="onboarding.accept")
def accept(suggestion_id: int, actor_id: int) -> str:
    """A large suggestion's groups, made off the web request (services.suggestion_accept_run)."""
    try:
        return suggestion_accept_run(suggestion_id, actor_id)
    except Exception as exc:
        suggestion_crashed(suggestion_id, f"{type(exc).__name__}: {exc}")
        raise
