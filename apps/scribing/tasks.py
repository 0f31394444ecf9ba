"""Scribing e-mails, sent by a worker after the publishing or swapping transaction commits."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from apps.core import outbox
from apps.core.models import Course
from apps.core.timefmt import format_instant
from apps.scribing.models import ScribeDuty, ScribeSwap


def _when(d: ScribeDuty, course: Course) -> str:
    return d.lecture.starts_at.astimezone(course.tz).strftime("%a %b %d")


@shared_task(name="scribing.solve")
def solve_task(course_id: int, actor_id: int | None) -> bool:
    """A large course's solve, off the web request."""
    from apps.core.models import User
    from apps.scribing import services

    course = Course.objects.get(pk=course_id)
    actor = User.objects.filter(pk=actor_id).first() if actor_id else None
    try:
        return services.solve(actor=actor, course=course).ok
    finally:
        services.ScribePlan.objects.filter(course=course, solve_status="solving").update(
            solve_status="failed"
        )


@shared_task(name="scribing.email_duties")
def email_duties(course_id: int, student_ids: list[int]) -> int:
    """One e-mail per student with their lectures and notes due dates. Safe to run twice."""
    course = Course.objects.get(pk=course_id)
    duties = ScribeDuty.objects.filter(course=course, student_id__in=student_ids).select_related(
        "lecture", "student"
    )
    mine: dict[int, list[ScribeDuty]] = {}
    for d in duties:
        mine.setdefault(d.student_id, []).append(d)
    messages: list[outbox.Mail] = []
    for ds in mine.values():
        lines = "\n".join(
            f"- L{d.lecture.number} {d.lecture.title} ({_when(d, course)}); notes due "
            f"{format_instant(d.due_at, course.timezone)}"
            for d in ds
        )
        body = (
            f"Your scribe lectures for {course.code}:\n\n{lines}\n\nSubmit the notes (a link) and "
            "say which LLMs or other sources you used: "
            f"{settings.SITE_URL}/c/{course.code}/scribing/\nTo trade a lecture, propose a swap to "
            "a classmate on the same page."
        )
        messages.append(
            outbox.Mail([ds[0].student.email], f"[{course.code}] Your scribe lectures", body)
        )
    outbox.post("scribing.email_duties", messages, course_id=course.pk)
    return len(messages)


@shared_task(name="scribing.email_swap")
def email_swap(swap_id: int) -> int:
    swap = (
        ScribeSwap.objects.select_related(
            "course", "proposer", "other", "duty__lecture", "other_duty__lecture"
        )
        .filter(pk=swap_id)
        .first()
    )
    if swap is None:
        return 0
    what = f"L{swap.duty.lecture.number}" + (
        f" for L{swap.other_duty.lecture.number}" if swap.other_duty else " (given away)"
    )
    body = (
        f"{swap.other} accepted the swap of {what} with {swap.proposer}. Staff can see and revert "
        f"it at {settings.SITE_URL}/c/{swap.course.code}/scribing/."
    )
    from apps.core.models import STAFF_ROLES, Membership

    staff = list(
        Membership.objects.filter(
            course=swap.course, role__in=STAFF_ROLES, is_active=True
        ).values_list("user__email", flat=True)
    )
    to = [swap.proposer.email, swap.other.email, *staff]  # staff are told, and can revert it
    mail = outbox.Mail(to, f"[{swap.course.code}] Scribe swap accepted", body)
    outbox.post("scribing.email_swap", [mail], course_id=swap.course_id)
    return len(to)
