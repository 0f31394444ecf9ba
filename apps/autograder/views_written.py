"""Grading written answers (staff): a question's rubric items, its answers grouped where they
read the same, items applied to many answers at once. Scores change as items do."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.autograder import fairgrading, written
from apps.autograder.models import Question, QuestionSet, RubricMark
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.views_helpers import course_action, course_for

PAGE = 25


def _question(course: Course, key: str, qkey: str) -> Question:
    q = (
        Question.objects.select_related("question_set__course")
        .filter(question_set__course=course, question_set__key=key, key=qkey)
        .first()
    )
    if q is None or q.kind != Question.Kind.WRITTEN:
        raise Http404("No such written question.")
    return q


def _back(request: AuthedRequest, course: Course, q: Question) -> HttpResponse:
    here = reverse(
        "autograder:written",
        kwargs={"code": course.code, "key": q.question_set.key, "qkey": q.key},
    )
    back = request.POST.get("back", "")
    return redirect(f"{here}?{back}" if back else here)


@login_required
@require_GET
def written_page(request: AuthedRequest, code: str, key: str, qkey: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    q = _question(course, key, qkey)
    search = request.GET.get("q", "").strip()
    ungraded = request.GET.get("show") == "ungraded"
    hide = q.question_set.hide_names
    first, second = fairgrading.share_of(q, request.user)
    # A split question opens on the grader's own answers; their overlap answers are graded on
    # their own view, with their own marks (never the first grader's).
    share = request.GET.get("share") or ("mine" if first else "second" if second else "all")
    if share not in ("mine", "second", "all"):
        share = "all"
    # ?answer=<key>: one answer alone (the set page's "answers graded differently" link); the
    # key is the one the page gives (an anonymous key while names are hidden)
    one = request.GET.get("answer", "")
    only = first if share == "mine" else second if share == "second" else None
    without = second if share != "second" else None
    found, _unknown = written.students_of_keys(q, [one]) if one else ([], [])
    if found:
        share, only, without = "all", set(found), None
    groups = written.answer_groups(
        q,
        q=search,
        ungraded=ungraded,
        hide_names=hide,
        only=only,
        without=without,
        second_grader=request.user.pk if share == "second" else None,
    )
    page = Paginator(groups, PAGE).get_page(request.GET.get("page"))
    items = list(q.rubric_items.all())
    graded = RubricMark.objects.filter(item__question=q)
    return render(
        request,
        "autograder/written.html",
        {
            "course": course,
            "qs": q.question_set,
            "q": q,
            "items": items,
            "page": page,
            "search": search,
            "ungraded": ungraded,
            "answered": sum(g.size for g in groups),
            "graded_students": graded.values("student_id").distinct().count(),
            "scoring": written.scoring_of(q),
            "hide": hide,
            "share": share,
            "first_share": len(first),
            "second_share": len(second),
        },
    )


def _ids(values: list[str]) -> list[int]:
    out = []
    for v in values:
        out += [int(x) for x in v.split(",") if x.strip().isdigit()]
    return out


def _unknown_answers(unknown: list[str]) -> str:
    shown = ", ".join(unknown[:3]) + (" …" if len(unknown) > 3 else "")
    return (
        f"Nothing was changed: {len(unknown)} of the ticked answers ({shown}) are not answers "
        "to this question; reload the page and tick them again."
    )


@course_action(staff=True)
def marks_apply(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Staff apply or take off rubric items on the chosen answers (whole groups at once)."""
    q = _question(course, key, qkey)
    apply = (
        fairgrading.second_marks_apply if request.POST.get("second") == "1" else written.marks_apply
    )
    keys = [k for v in request.POST.getlist("students") for k in v.split(",")]
    student_ids, unknown = written.students_of_keys(q, keys)
    if unknown:
        messages.error(request, _unknown_answers(unknown))
        return _back(request, course, q)
    try:
        n = apply(
            actor=request.user,
            question=q,
            student_ids=student_ids,
            add=_ids(request.POST.getlist("add")),
            remove=_ids(request.POST.getlist("remove")),
        )
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Rubric updated on {n} answer(s); their scores changed with it.")
    return _back(request, course, q)


def _item_save(
    request: AuthedRequest, course: Course, q: Question, item_id: int | None
) -> HttpResponse:
    try:
        item = written.item_save(
            actor=request.user,
            question=q,
            item_id=item_id,
            key=request.POST.get("key", ""),
            points=request.POST.get("points", ""),
            comment=request.POST.get("comment", ""),
        )
    except DomainError as exc:
        label = {"key": "Key", "points": "Score change", "comment": "Comment"}.get(exc.field or "")
        messages.error(request, f"{label}: {exc.message}" if label else exc.message)
    else:
        n = item.marks.count()
        messages.success(
            request,
            f"Item {item.key} saved; {n} answer(s) carrying it re-scored."
            if item_id
            else f"Item {item.key} added.",
        )
    return _back(request, course, q)


@course_action(staff=True)
def item_add(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Staff add a rubric item to a written question."""
    return _item_save(request, course, _question(course, key, qkey), None)


@course_action(staff=True)
def item_edit(
    request: AuthedRequest, course: Course, key: str, qkey: str, item_id: int
) -> HttpResponse:
    """Staff change a rubric item; every answer it is applied to is re-scored."""
    return _item_save(request, course, _question(course, key, qkey), item_id)


def written_questions(qs: QuestionSet) -> list[Question]:
    return list(qs.questions.filter(kind=Question.Kind.WRITTEN).order_by("position"))
