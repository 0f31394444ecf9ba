"""Each question set's time and state as one person sees it: when it is due (a student's own
effective deadline, slack days and extensions applied), whether it is open, closed, not released
yet or has its results out, how many questions are answered and the released score.

A fixed number of queries for any number of sets, so the list stays within its query budget."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery, Sum
from django.utils import timezone

from apps.autograder.models import (
    Answer,
    Grade,
    GradingRun,
    PracticeAttempt,
    Question,
    QuestionSet,
)
from apps.core.compiled import compiled_query
from apps.core.models import Course, User
from apps.core.permissions import is_staff


@dataclass(frozen=True)
class SetState:
    qs: QuestionSet
    state: str  # "open" | "closed" | "not-released" | "results" | "practice"
    due: dt.datetime | None  # the person's deadline (effective for a student, base for staff)
    base_due: dt.datetime | None
    opens: dt.datetime | None  # when its assignment is released, if still ahead
    questions: int
    answered: int
    score: float | None
    max_points: float | None

    @property
    def label(self) -> str:
        return {
            "open": "open",
            "closed": "closed",
            "not-released": "not released yet",
            "results": "results released",
            "practice": "practice: checked at once",
        }[self.state]

    @property
    def moved(self) -> bool:
        """The student's deadline differs from the base one (slack days or an extension)."""
        return self.due is not None and self.base_due is not None and self.due != self.base_due


def _questions(course_id: int) -> QuerySet[Any]:
    return (
        Question.objects.filter(question_set__course_id=course_id)
        .order_by()
        .values("question_set_id")
        .annotate(n=Count("id"))
        .values_list("question_set_id", "n")
    )


def answered_per_set(course_id: int, student_id: int) -> QuerySet[Any]:
    """(set id, questions the student answered in it) over the course: a compiled query's
    builder, shared by the set list and the Today list."""
    return (
        Answer.objects.filter(question__question_set__course_id=course_id, student_id=student_id)
        .order_by()
        .values("question__question_set_id")
        .annotate(n=Count("question_id", distinct=True))
        .values_list("question__question_set_id", "n")
    )


def _practised(course_id: int, student_id: int) -> QuerySet[Any]:
    """(set id, questions whose last check was right): a practice set's "answered correctly";
    a question whose last check was wrong is never counted."""
    latest = (
        PracticeAttempt.objects.filter(
            question_id=OuterRef("question_id"), student_id=OuterRef("student_id")
        )
        .order_by("-at", "-pk")
        .values("pk")[:1]
    )
    return (
        PracticeAttempt.objects.filter(
            question__question_set__course_id=course_id, student_id=student_id, fraction__gte=1
        )
        .filter(pk=Subquery(latest))
        .order_by()
        .values("question__question_set_id")
        .annotate(n=Count("question_id", distinct=True))
        .values_list("question__question_set_id", "n")
    )


def set_states(
    *, course: Course, sets: list[QuestionSet], student: User | None, now: dt.datetime | None = None
) -> list[SetState]:
    """`student` None: staff's view (base deadlines, no answers or score of their own)."""
    now = now or timezone.now()
    effective: dict[int, dt.datetime] = {}
    if student is not None:
        from apps.slackdays.selectors import student_deadlines

        effective = {
            d.assignment.pk: d.effective for d in student_deadlines(course=course, student=student)
        }
    # Counted over the course's sets (one compiled query each, whatever `sets` holds): the sets
    # not asked about are never looked up.
    counts = dict(compiled_query("autograder.sets.questions", _questions, course.pk))
    answered: dict[int, int] = {}
    scores: dict[int, tuple[float, float]] = {}
    if student is not None:
        answered = dict(
            compiled_query("autograder.sets.answered", answered_per_set, course.pk, student.pk)
        )
        if any(s.practice for s in sets):  # a practice set is answered by its checks
            practised = compiled_query(
                "autograder.sets.practised", _practised, course.pk, student.pk
            )
            practising = {s.pk for s in sets if s.practice}
            answered |= {k: n for k, n in practised if k in practising}
        released = [s.pk for s in sets if s.released_at is not None and s.released_at <= now]
        passes: dict[int, int] = {}
        for set_id, pass_id in GradingRun.objects.filter(
            question_set_id__in=released, current_pass__isnull=False
        ).values_list("question_set_id", "current_pass_id"):  # newest first (Meta ordering)
            passes.setdefault(set_id, pass_id)
        by_pass = {pass_id: set_id for set_id, pass_id in passes.items()}
        for pass_id, score, most in (
            Grade.objects.filter(grading_pass_id__in=list(by_pass), student=student)
            .values("grading_pass_id")
            .annotate(score=Sum("score"), most=Sum("max_points"))
            .values_list("grading_pass_id", "score", "most")
        ):
            scores[by_pass[pass_id]] = (float(score or 0), float(most or 0))
    out = []
    for s in sets:
        a = s.assignment
        base = a.due_at if a is not None else None
        due = effective.get(a.pk, base) if a is not None else None
        opens = a.release_at if a is not None and a.release_at > now else None
        if s.practice:
            state = "practice"
        elif s.released_at is not None and s.released_at <= now:
            state = "results"
        elif opens is not None:
            state = "not-released"
        elif due is not None and now > due:
            state = "closed"
        else:
            state = "open"
        score, most = scores.get(s.pk, (None, None))
        out.append(
            SetState(
                qs=s,
                state=state,
                due=due,
                base_due=base,
                opens=opens,
                questions=counts.get(s.pk, 0),
                answered=answered.get(s.pk, 0),
                score=score,
                max_points=most,
            )
        )
    return out


def _sets_with_assignment(course_id: int) -> QuerySet[QuestionSet]:
    return QuestionSet.objects.filter(course_id=course_id).select_related("assignment")


def question_set_list(*, user: User, course: Course) -> tuple[bool, list[SetState]]:
    """The question sets of the course as `user` sees them, and whether they see staff's view
    (base deadlines, question counts) or a student's (their own deadline, answered, score).
    The list page and the API both read this, so they cannot say different things."""
    staff = is_staff(user, course)
    sets = list(compiled_query("autograder.sets", _sets_with_assignment, course.pk))
    return staff, set_states(course=course, sets=sets, student=None if staff else user)
