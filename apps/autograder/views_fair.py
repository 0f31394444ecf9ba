"""Fair grading and teaching practice on the pages: a written question split among graders
(with an overlap graded twice), and a practice question's "Show the solution"."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from apps.autograder import fairgrading, practice
from apps.autograder.models import Question
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, User
from apps.core.views_helpers import course_action, errors_as_messages


class SplitForm(forms.Form):
    """Split one written question's answers among graders."""

    graders = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Graders",
        help_text="The TAs and instructors who share this question's answers, in this order.",
    )
    ranges = forms.CharField(
        required=False,
        max_length=300,
        label="Ranges (optional)",
        help_text="Empty: evenly. Otherwise one range per grader in the order above, e.g. "
        "“1-12, 13-20”; answers are numbered in the order they were first saved.",
    )
    overlap = forms.IntegerField(
        min_value=0,
        max_value=10000,
        initial=0,
        label="Answers graded twice",
        help_text="This many answers, spread over the list, are also graded by the next grader, "
        "who does not see the first grader's marks. The first grader's marks count; the "
        "instructor sees the agreement.",
    )

    def __init__(self, *args: Any, staff: list[User], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        graders = cast(forms.MultipleChoiceField, self.fields["graders"])
        graders.choices = [(str(u.pk), u.get_full_name() or u.email) for u in staff]


def split_forms(course: Course, hand: list[Question]) -> list[tuple[Question, SplitForm]]:
    staff = fairgrading.staff_of(course) if hand else []
    return [(q, SplitForm(prefix=f"split-{q.key}", staff=staff)) for q in hand]


def _to_set(course: Course, key: str, anchor: str = "") -> HttpResponse:
    return redirect(reverse("autograder:set", kwargs={"code": course.code, "key": key}) + anchor)


@course_action(staff=True)
def written_split(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Staff split a written question's answers among graders (evenly or by ranges), with an
    optional overlap graded twice."""
    with errors_as_messages(request):
        q = Question.objects.filter(
            question_set__course=course, question_set__key=key, key=qkey
        ).first()
        if q is None:
            raise DomainError("No such question in this set.")
        form = SplitForm(request.POST, prefix=f"split-{q.key}", staff=fairgrading.staff_of(course))
        if not form.is_valid():
            raise DomainError(
                "; ".join(
                    f"{form.fields[f].label}: {' '.join(str(m) for m in e)}"
                    for f, e in form.errors.items()
                )
            )
        ranges = [r for r in form.cleaned_data["ranges"].split(",") if r.strip()]
        done = fairgrading.split_save(
            actor=request.user,
            question=q,
            grader_ids=[int(g) for g in form.cleaned_data["graders"]],
            ranges=ranges or None,
            overlap=form.cleaned_data["overlap"] or 0,
        )
        messages.success(
            request,
            f"{q.key}: {done.answers} answers split among {len(done.shares)} grader(s)"
            + (f"; {done.overlap} graded twice." if done.overlap else "."),
        )
    return _to_set(course, key, "#written-grading")


@course_action(student=True)
def practice_solution(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """A student gives up on a practice question's numbers: the solution is shown."""
    with errors_as_messages(request):
        q = Question.objects.filter(
            question_set__course=course, question_set__key=key, key=qkey
        ).first()
        if q is None:
            raise DomainError("No such question in this set.")
        practice.solution_show(actor=request.user, question=q)
        messages.success(request, f"{q.key}: the solution of your numbers is shown below.")
    return _to_set(course, key, f"#q-{qkey}")


def practice_teaching(q: Question, user: User, number: int, tries: int) -> dict[str, Any]:
    """A practice question's teaching state for the page: the wrong checks of this variant, the
    course's number before the solution shows (`tries`), and the solution once shown."""
    return {
        "wrong": practice.wrong_checks(q, user, number),
        "tries_before_solution": tries,
        "solution": practice.solution_shown(q, user),
    }
