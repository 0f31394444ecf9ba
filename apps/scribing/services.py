"""Scribing writes: eligibility, preferences, solving, hand adjustments, publishing, notes and
reviews, swaps. Every rule the solver holds is re-checked here (`solver.violations`) for each
hand change and swap, under row locks, so two concurrent swaps of one duty cannot both win."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from apps.calendar.models import Lecture
from apps.core.errors import Conflict, DomainError, NotFound
from apps.core.links import link_problem
from apps.core.models import Course, Membership, Role, User
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.groups.models import Group, GroupMembership
from apps.scribing import solver
from apps.scribing.models import (
    ScribeDuty,
    ScribeGroupMode,
    ScribeLecture,
    ScribePlan,
    ScribePreference,
    ScribeSwap,
)

Status = ScribeDuty.Status


def plan_for(course: Course, *, lock: bool = False) -> ScribePlan:
    plan, _ = ScribePlan.objects.get_or_create(course=course)
    if lock:
        plan = ScribePlan.objects.select_for_update().get(pk=plan.pk)
    return plan


def eligible_lectures(course: Course) -> list[tuple[Lecture, int | None]]:
    """(lecture, needed) for every lecture that takes scribes: all of them unless staff said no."""
    rows = {r.lecture_id: r for r in ScribeLecture.objects.filter(course=course)}
    out = []
    for lec in Lecture.objects.filter(course=course).order_by("starts_at", "number"):
        row = rows.get(lec.pk)
        if row is None or row.eligible:
            out.append((lec, row.needed if row else None))
    return out


def active_students(course: Course) -> list[User]:
    return [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .select_related("user")
        .order_by("user__full_name", "user_id")
    ]


def active_student_count(course: Course) -> int:
    return Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count()


def duty_counts(course: Course) -> dict[int, int]:
    """Published scribes per lecture, counted in the database (26 rows, not one per duty)."""
    return dict(
        ScribeDuty.objects.filter(course=course)
        .values("lecture_id")
        .annotate(n=Count("pk"))
        .values_list("lecture_id", "n")
    )


def _label(u: User) -> str:
    return u.full_name or u.email


def upcoming_lectures(
    course: Course, now: dt.datetime | None = None
) -> list[tuple[Lecture, int | None]]:
    """The eligible lectures that have not started yet: the only ones a student can still ask
    for or be newly assigned (a duty on a lecture already held would be late at once)."""
    now = now or timezone.now()
    return [(lec, needed) for lec, needed in eligible_lectures(course) if lec.starts_at > now]


def problem_for(
    course: Course, *, keep_published: bool = True, now: dt.datetime | None = None
) -> solver.Problem:
    """The solver's input from the database (6 queries). Time-aware: lectures that have started
    take no new scribes; one that already holds published duties stays with exactly those, so
    the students keep them and count them towards their total."""
    now = now or timezone.now()
    plan = plan_for(course)
    students = active_students(course)
    groups = dict(
        GroupMembership.objects.filter(
            course=course, left_at__isnull=True, group__dissolved_at__isnull=True
        ).values_list("user_id", "group_id")
    )
    held = Counter(
        ScribeDuty.objects.filter(course=course, lecture__starts_at__lte=now).values_list(
            "lecture_id", flat=True
        )
    )
    lectures = [
        (lec, needed if lec.starts_at > now else held[lec.pk])
        for lec, needed in eligible_lectures(course)
        if lec.starts_at > now or held[lec.pk]
    ]
    tz = course.tz
    lecs = [
        solver.Lec(lec.pk, f"lecture {lec.number}", lec.starts_at.astimezone(tz).date(), needed)
        for lec, needed in lectures
    ]
    ids = {lec.id for lec in lecs}
    cannot: set[tuple[int, int]] = set()
    prefer: dict[tuple[int, int], int] = {}
    for p in ScribePreference.objects.filter(course=course):
        if p.lecture_id not in ids:
            continue
        if p.kind == ScribePreference.Kind.CANNOT:
            cannot.add((p.student_id, p.lecture_id))
        else:
            prefer[p.student_id, p.lecture_id] = p.rank or 1
    modes = dict(
        ScribeGroupMode.objects.filter(group__course=course).values_list("group_id", "mode")
    )
    fixed = set()
    if keep_published:
        fixed = set(
            ScribeDuty.objects.filter(
                course=course, student__in=[s.pk for s in students], lecture_id__in=ids
            ).values_list("student_id", "lecture_id")
        )
    return solver.Problem(
        students=[solver.Stu(s.pk, _label(s), groups.get(s.pk)) for s in students],
        lectures=lecs,
        per_student=plan.per_student,
        min_gap_days=plan.min_gap_days,
        cannot=cannot,
        prefer=prefer,
        max_rank=plan.max_preferences,
        spread={g for g, m in modes.items() if m == "spread"},
        together={g for g, m in modes.items() if m == "together"},
        fixed=fixed,
        seed=plan.seed,
    )


# ------------------------------------------------------------------ staff: policy and eligibility


def plan_update(*, actor: User, course: Course, **fields: Any) -> ScribePlan:
    allowed = {
        "per_student",
        "min_gap_days",
        "notes_due_days",
        "max_preferences",
        "preferences_due_at",
        "seed",
    }
    with transaction.atomic():
        plan = plan_for(course, lock=True)
        before = {k: str(getattr(plan, k)) for k in fields if k in allowed}
        for k, v in fields.items():
            if k in allowed and v is not None:
                setattr(plan, k, v)
        if plan.per_student < 1:
            raise DomainError("Each student scribes at least one lecture.", field="per_student")
        plan.save()
        audit_record(
            actor=actor,
            action="scribing.plan_update",
            course=course,
            obj=plan,
            before=before,
            after={k: str(getattr(plan, k)) for k in before},
        )
    return plan


MAX_NEEDED = 1000  # scribes for one lecture: far above any class, far below the column's limit


def lecture_set(
    *, actor: User, course: Course, lecture_id: int, eligible: bool, needed: int | None
) -> ScribeLecture:
    lecture = Lecture.objects.filter(course=course, pk=lecture_id).first()
    if lecture is None:
        raise NotFound("No such lecture in this course.")
    if needed is not None and not 0 <= needed <= MAX_NEEDED:
        raise DomainError(
            f"Scribes needed for L{lecture.number} is a whole number from 0 to {MAX_NEEDED}.",
            field="needed",
        )
    with transaction.atomic():
        row, _ = ScribeLecture.objects.select_for_update().get_or_create(
            course=course, lecture=lecture
        )
        row.eligible, row.needed = eligible, needed
        row.save()
        audit_record(
            actor=actor,
            action="scribing.lecture_set",
            course=course,
            obj=lecture,
            after={"eligible": eligible, "needed": needed},
        )
    return row


# ------------------------------------------------------------------ students: preferences


def preferences_save(
    *,
    student: User,
    course: Course,
    cannot: list[int],
    prefer: list[int],
    group_mode: str | None = None,
    now: dt.datetime | None = None,
) -> None:
    """Replace the student's preferences: lectures they cannot take, and up to N they would like,
    best first. Refused after the preference deadline or once the assignment is published."""
    now = now or timezone.now()
    plan = plan_for(course)
    if plan.published_at:
        raise Conflict("Scribe lectures are already posted; ask a classmate to swap instead.")
    if plan.preferences_due_at and now > plan.preferences_due_at:
        raise Conflict("The preference deadline has passed.")
    ids = {lec.pk for lec, _ in upcoming_lectures(course, now)}
    if len(prefer) > plan.max_preferences:
        raise DomainError(
            f"Rank at most {plan.max_preferences} lectures you would like.", field="prefer"
        )
    if len(set(prefer)) != len(prefer) or len(set(cannot)) != len(cannot):
        raise DomainError("A lecture appears twice.", field="prefer")
    both = set(prefer) & set(cannot)
    if both:
        raise DomainError("A lecture cannot be both wanted and impossible.", field="cannot")
    unknown = (set(prefer) | set(cannot)) - ids
    if unknown:
        raise DomainError(
            "Only lectures that take scribes and have not happened yet can be chosen.",
            field="prefer",
        )
    if len(ids) - len(cannot) < plan.per_student:
        raise DomainError(
            f"Leave at least {plan.per_student} lectures you can take.", field="cannot"
        )
    with transaction.atomic():
        ScribePreference.objects.filter(course=course, student=student).delete()
        ScribePreference.objects.bulk_create(
            [
                ScribePreference(course=course, student=student, lecture_id=lid, kind="cannot")
                for lid in cannot
            ]
            + [
                ScribePreference(
                    course=course, student=student, lecture_id=lid, kind="prefer", rank=i
                )
                for i, lid in enumerate(prefer, start=1)
            ]
        )
        if group_mode is not None:
            group = Group.objects.filter(
                course=course,
                memberships__user=student,
                memberships__left_at__isnull=True,
                dissolved_at__isnull=True,
            ).first()
            if group is not None:
                if group_mode:
                    ScribeGroupMode.objects.update_or_create(
                        group=group, defaults={"mode": group_mode}
                    )
                else:
                    ScribeGroupMode.objects.filter(group=group).delete()


# ------------------------------------------------------------------ staff: solve, adjust, publish


def solve_requested(*, actor: User, course: Course) -> solver.Solution | None:
    """Solve now when the course is small (a fraction of a second for 40 students); otherwise
    queue it for a worker (2,000 students take about 20 s, too long for a web request) and
    return None: the page and `GET …/scribing/solve/` show "solving" until it is done."""
    from django.conf import settings

    if active_student_count(course) <= settings.SCRIBING_INLINE_MAX_STUDENTS:
        return solve(actor=actor, course=course)
    with transaction.atomic():
        plan = plan_for(course, lock=True)
        if plan.solve_status == "solving":
            raise Conflict("A solve is already running; its result appears here when it is done.")
        plan.solve_status = "solving"
        plan.save(update_fields=["solve_status", "updated_at"])

        def failed(_: BaseException) -> None:
            ScribePlan.objects.filter(pk=plan.pk).update(solve_status="")

        enqueue_on_commit(
            lambda: task_named("scribing.solve").delay(course.pk, actor.pk),
            what="the scribe solve",
            critical=True,
            on_failure=failed,
        )
    return None


def solve(*, actor: User | None, course: Course) -> solver.Solution:
    """Solve and store the proposal (published duties stay fixed)."""
    problem = problem_for(course)
    result = solver.solve(problem)
    with transaction.atomic():
        plan = plan_for(course, lock=True)
        plan.proposal = [list(p) for p in result.pairs] if result.ok else []
        plan.proposal_score, plan.proposal_bound = result.score, result.best_bound
        plan.proposal_optimal, plan.proposal_reasons = result.optimal, result.reasons
        plan.proposal_satisfied = {str(k): v for k, v in result.satisfied.items()}
        plan.solve_status, plan.solved_at = ("done" if result.ok else "failed"), timezone.now()
        plan.save()
        audit_record(
            actor=actor,
            action="scribing.solve",
            course=course,
            obj=plan,
            after={
                "ok": result.ok,
                "score": result.score,
                "optimal": result.optimal,
                "reasons": result.reasons[:5],
            },
        )
    return result


def proposal_move(
    *, actor: User, course: Course, student_id: int, from_lecture: int, to_lecture: int
) -> list[str]:
    """Move one student's proposed lecture to another; refused with every rule it would break."""
    with transaction.atomic():
        plan = plan_for(course, lock=True)
        if plan.published_at:
            raise Conflict("Already published: change duties with a swap, or release them first.")
        pairs = {(p[0], p[1]) for p in plan.proposal}
        if (student_id, from_lecture) not in pairs:
            raise DomainError("That student is not proposed on that lecture.", field="from_lecture")
        new = (pairs - {(student_id, from_lecture)}) | {(student_id, to_lecture)}
        broken = solver.violations(problem_for(course), sorted(new))
        if broken:
            raise DomainError("Not moved: " + "; ".join(broken[:5]) + ".", field="to_lecture")
        plan.proposal = [list(p) for p in sorted(new)]
        plan.save(update_fields=["proposal", "updated_at"])
        audit_record(
            actor=actor,
            action="scribing.proposal_move",
            course=course,
            obj=plan,
            after={"student": student_id, "from": from_lecture, "to": to_lecture},
        )
    return []


def due_for(lecture: Lecture, days: int) -> dt.datetime:
    return lecture.starts_at + dt.timedelta(days=days)


def publish(*, actor: User, course: Course) -> int:
    """Turn the proposal into duties (the ones already published stay) and e-mail each student
    their lectures once the transaction commits. Returns how many duties were created."""
    with transaction.atomic():
        plan = plan_for(course, lock=True)
        if not plan.proposal:
            raise Conflict("Solve first: there is no proposed assignment to publish.")
        problem = problem_for(course)
        broken = solver.violations(problem, [(p[0], p[1]) for p in plan.proposal])
        if broken:
            raise Conflict(
                "The proposal no longer holds (the roster or preferences changed): "
                + "; ".join(broken[:3])
                + ". Solve again."
            )
        lectures = {lec.pk: lec for lec in Lecture.objects.filter(course=course)}
        existing = set(
            ScribeDuty.objects.filter(course=course).values_list("student_id", "lecture_id")
        )
        new = [
            ScribeDuty(
                course=course,
                student_id=s,
                lecture_id=lid,
                due_at=due_for(lectures[lid], plan.notes_due_days),
            )
            for s, lid in plan.proposal
            if (s, lid) not in existing
        ]
        ScribeDuty.objects.bulk_create(new)
        plan.published_at = plan.published_at or timezone.now()
        plan.save(update_fields=["published_at", "updated_at"])
        audit_record(
            actor=actor,
            action="scribing.publish",
            course=course,
            obj=plan,
            after={"created": len(new)},
        )
        students = sorted({d.student_id for d in new})
        if students:
            enqueue_on_commit(
                lambda: task_named("scribing.email_duties").delay(course.pk, students),
                what="the scribe e-mails",
                critical=False,
            )
    return len(new)


def release(*, actor: User, course: Course, duty_id: int) -> None:
    """Staff take a published duty back (a student dropped); the next solve fills the gap."""
    with transaction.atomic():
        duty = ScribeDuty.objects.select_for_update().filter(course=course, pk=duty_id).first()
        if duty is None:
            raise NotFound("No such duty.")
        if duty.status != Status.ASSIGNED:
            raise Conflict("Notes were already submitted for this duty; it cannot be released.")
        audit_record(actor=actor, action="scribing.release", course=course, obj=duty)
        ScribeSwap.objects.filter(duty=duty).delete()
        duty.delete()


# ------------------------------------------------------------------ duties: notes and review


def duty_submit(
    *,
    student: User,
    course: Course,
    duty_id: int,
    link: str,
    declaration: str,
    now: dt.datetime | None = None,
) -> ScribeDuty:
    with transaction.atomic():
        duty = (
            ScribeDuty.objects.select_for_update()
            .filter(course=course, pk=duty_id, student=student)
            .first()
        )
        if duty is None:
            raise NotFound("No such duty of yours.")
        problem = link_problem(
            link, missing="Give the link to your notes (a pull request, Overleaf or Docs link)."
        )
        if problem is not None:
            raise DomainError(problem, field="link")
        if not declaration.strip():
            raise DomainError(
                "Say which LLMs or other sources you used (or write “none”).", field="declaration"
            )
        if duty.status == Status.ACCEPTED:
            raise Conflict("These notes were already accepted.")
        duty.link, duty.declaration = link.strip(), declaration.strip()
        duty.submitted_at = now or timezone.now()
        duty.status = Status.SUBMITTED
        duty.save()
        audit_record(
            actor=student, action="scribing.submit", course=course, obj=duty, after={"link": link}
        )
    return duty


def duty_review(
    *, actor: User, course: Course, duty_id: int, accept: bool, feedback: str
) -> ScribeDuty:
    if not accept and not feedback.strip():
        raise DomainError("Say what to revise.", field="feedback")
    with transaction.atomic():
        duty = ScribeDuty.objects.select_for_update().filter(course=course, pk=duty_id).first()
        if duty is None:
            raise NotFound("No such duty.")
        if duty.status == Status.ASSIGNED:
            raise Conflict("Nothing submitted yet to review.")
        duty.status = Status.ACCEPTED if accept else Status.REVISION
        duty.feedback, duty.reviewed_by, duty.reviewed_at = feedback.strip(), actor, timezone.now()
        duty.save()
        audit_record(
            actor=actor,
            action="scribing.review",
            course=course,
            obj=duty,
            after={"status": duty.status, "feedback": duty.feedback},
        )
    return duty


# ------------------------------------------------------------------ swaps


def swap_propose(
    *,
    proposer: User,
    course: Course,
    duty_id: int,
    other_email: str,
    other_duty_id: int | None,
    note: str = "",
) -> ScribeSwap:
    duty = ScribeDuty.objects.filter(course=course, pk=duty_id, student=proposer).first()
    if duty is None:
        raise NotFound("No such duty of yours.")
    if duty.status != Status.ASSIGNED:
        raise Conflict("Notes were already submitted for this duty; it can no longer be swapped.")
    other = User.objects.filter(
        email__iexact=other_email.strip(),
        memberships__course=course,
        memberships__role=Role.STUDENT,
        memberships__is_active=True,
    ).first()
    if other is None or other.pk == proposer.pk:
        raise DomainError("Name another student of this course by e-mail.", field="other")
    other_duty = None
    if other_duty_id is not None:
        other_duty = ScribeDuty.objects.filter(
            course=course, pk=other_duty_id, student=other
        ).first()
        if other_duty is None:
            raise DomainError("That lecture is not one of theirs.", field="other_duty")
    _check_swap(course, duty, other, other_duty)
    with transaction.atomic():
        swap = ScribeSwap.objects.create(
            course=course,
            duty=duty,
            proposer=proposer,
            other=other,
            other_duty=other_duty,
            note=note[:300],
        )
        audit_record(actor=proposer, action="scribing.swap_propose", course=course, obj=swap)
    return swap


def _check_swap(
    course: Course, duty: ScribeDuty, other: User, other_duty: ScribeDuty | None
) -> None:
    pairs = set(ScribeDuty.objects.filter(course=course).values_list("student_id", "lecture_id"))
    pairs.discard((duty.student_id, duty.lecture_id))
    pairs.add((other.pk, duty.lecture_id))
    if other_duty is not None:
        pairs.discard((other.pk, other_duty.lecture_id))
        pairs.add((duty.student_id, other_duty.lecture_id))
    problem = problem_for(course, keep_published=False)
    touched = {duty.student_id, other.pk}
    broken = list(
        solver.violations(problem, sorted(pairs), only_students=touched, check_loads=False)
    )
    if (
        other_duty is None
    ):  # a give-away moves a load from one student to another: counts change by design
        broken = [v for v in broken if "scribes" not in v]
    if broken:
        raise Conflict("This swap breaks a rule: " + "; ".join(broken[:4]) + ".")


def swap_decide(*, actor: User, course: Course, swap_id: int, accept: bool) -> ScribeSwap:
    """The other student accepts or declines. Both duties are locked (in id order) and the rules
    re-checked, so of two acceptances touching the same duty exactly one wins."""
    with transaction.atomic():
        swap = ScribeSwap.objects.select_for_update().filter(course=course, pk=swap_id).first()
        if swap is None or actor.pk not in (swap.other_id, swap.proposer_id):
            raise NotFound("No such swap for you.")
        if swap.status != ScribeSwap.Status.OPEN:
            raise Conflict(f"This swap is already {swap.get_status_display().lower()}.")
        if actor.pk == swap.proposer_id:
            if accept:
                raise DomainError("The other student accepts; you can only cancel.")
            swap.status = ScribeSwap.Status.CANCELLED
        elif not accept:
            swap.status = ScribeSwap.Status.DECLINED
        else:
            ids = sorted(x for x in (swap.duty_id, swap.other_duty_id) if x)
            duties = {
                d.pk: d
                for d in ScribeDuty.objects.select_for_update().filter(pk__in=ids).order_by("pk")
            }
            duty, other_duty = (
                duties.get(swap.duty_id),
                duties.get(swap.other_duty_id) if swap.other_duty_id else None,
            )
            if (
                duty is None
                or duty.student_id != swap.proposer_id
                or duty.status != Status.ASSIGNED
                or (
                    swap.other_duty_id
                    and (
                        other_duty is None
                        or other_duty.student_id != swap.other_id
                        or other_duty.status != Status.ASSIGNED
                    )
                )
            ):
                raise Conflict("One of these duties changed hands since the swap was proposed.")
            _check_swap(course, duty, actor, other_duty)
            # (other, this lecture) and (proposer, their lecture) are both new pairs: no clash
            ScribeDuty.objects.filter(pk=duty.pk).update(student_id=swap.other_id)
            if other_duty is not None:
                ScribeDuty.objects.filter(pk=other_duty.pk).update(student_id=swap.proposer_id)
            swap.status = ScribeSwap.Status.ACCEPTED
            enqueue_on_commit(
                lambda: task_named("scribing.email_swap").delay(swap.pk),
                what="the swap e-mail",
                critical=False,
            )
        swap.decided_at = timezone.now()
        swap.save(update_fields=["status", "decided_at"])
        audit_record(actor=actor, action=f"scribing.swap_{swap.status}", course=course, obj=swap)
    return swap


def swap_revert(*, actor: User, course: Course, swap_id: int) -> ScribeSwap:
    with transaction.atomic():
        swap = ScribeSwap.objects.select_for_update().filter(course=course, pk=swap_id).first()
        if swap is None:
            raise NotFound("No such swap.")
        if swap.status != ScribeSwap.Status.ACCEPTED:
            raise Conflict("Only an accepted swap can be reverted.")
        ids = sorted(x for x in (swap.duty_id, swap.other_duty_id) if x)
        duties = {
            d.pk: d
            for d in ScribeDuty.objects.select_for_update().filter(pk__in=ids).order_by("pk")
        }
        if any(d.status != Status.ASSIGNED for d in duties.values()):
            raise Conflict(
                "Notes were already submitted for a swapped duty; it cannot be reverted."
            )
        ScribeDuty.objects.filter(pk=swap.duty_id).update(student_id=swap.proposer_id)
        if swap.other_duty_id:
            ScribeDuty.objects.filter(pk=swap.other_duty_id).update(student_id=swap.other_id)
        swap.status = ScribeSwap.Status.REVERTED
        swap.decided_at = timezone.now()
        swap.save(update_fields=["status", "decided_at"])
        audit_record(actor=actor, action="scribing.swap_revert", course=course, obj=swap)
    return swap
