from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.autograder import (
    fairgrading,
    passes,
    practice,
    regrades,
    reveal,
    rules,
    services,
    uploads,
    views_fair,
    views_regrades,
    written,
)
from apps.autograder.models import Answer, AnswerUpload, GradingRun, Question, QuestionSet
from apps.autograder.selectors import (
    canvas_csv,
    gradescope_csv,
    histogram_svg,
    item_analysis,
    released_run,
    secondary_credit,
    totals_rows,
    visible_grades,
)
from apps.autograder.setstate import question_set_list, set_states
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_instructor, is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages, form_kept

RESULTS_PER_PAGE = 50  # the score list of a run; the histogram above counts every student


class UploadForm(forms.Form):
    file = forms.FileField(
        label="Answers (CSV)",
        help_text="An Email or SID column, then one column per question: q1, q2 … and q6.1, q6.2 "
        "for parts. Google Forms and Gradescope exports work too.",
    )


def _set(course: Course, key: str) -> QuestionSet:
    qs = QuestionSet.objects.filter(course=course, key=key).first()
    if qs is None:
        raise Http404("No such question set.")
    return qs


@login_required
def sets(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code)
    staff, rows = question_set_list(user=request.user, course=course)
    return render(request, "autograder/sets.html", {"course": course, "rows": rows, "staff": staff})


@login_required
@require_GET
def set_page(request: AuthedRequest, code: str, key: str) -> HttpResponse:
    """Students: their questions, answers and (once released) grades; staff: the keys, the
    answers upload, grading runs and release. Every change posts to its own action view."""
    course = course_for(request, code)
    qs = _set(course, key)
    if not is_staff(request.user, course):
        if qs.practice:
            return practice_set(request, course, qs)
        return student_set(request, course, qs)
    return _staff_set(request, course, qs, UploadForm())


def _to_set(course: Course, qs: QuestionSet, query: str = "") -> HttpResponse:
    here = reverse("autograder:set", kwargs={"code": course.code, "key": qs.key})
    return redirect(f"{here}{query}")


@course_action(student=True)
def answers_save(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """A student saves answers (any subset of parts) until the deadline."""
    qs = _set(course, key)
    saved, refused = 0, []
    with errors_as_messages(request):
        for q in qs.questions.order_by("position"):
            parts = {
                p: request.POST.get(f"{q.key}-{p}", "")
                for p in range(max(len(q.parts), 1))
                if f"{q.key}-{p}" in request.POST
            }
            if not parts:
                continue
            try:
                services.answer_submit(actor=request.user, question=q, answers=parts)
            except DomainError as exc:  # a unit this part does not take: say which, save the rest
                if exc.field != "answers":
                    raise
                refused.append(exc.message)
            else:
                saved += 1
        for why in refused:
            messages.error(request, f"Not saved: {why}", extra_tags="refused-invalid")
        if saved:
            messages.success(
                request,
                f"{saved} answer(s) saved. You can change them until the deadline.",
            )
    return _to_set(course, qs)


@course_action(staff=True)
def upload_create(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """Staff upload an answers CSV; it is read on a worker and previewed before storing."""
    qs = _set(course, key)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _staff_set(request, course, qs, form)
    f = form.cleaned_data["file"]
    try:
        upload = uploads.upload_create(
            actor=request.user, question_set=qs, filename=f.name, data=f.read()
        )
    except DomainError as exc:
        form.add_error("file", exc.message)
        return _staff_set(request, course, qs, form)
    return _to_set(course, qs, f"?upload={upload.pk}")


@course_action(staff=True)
def upload_commit(request: AuthedRequest, course: Course, key: str, upload_id: int) -> HttpResponse:
    """Staff store a previewed upload's answers."""
    qs = _set(course, key)
    try:
        upload = uploads.upload_commit(actor=request.user, question_set=qs, upload_id=upload_id)
    except DomainError as exc:
        messages.error(request, exc.message, extra_tags=f"refused-{exc.code}")
        return _to_set(course, qs)
    messages.success(request, f"Storing the answers from {upload.filename}…")
    return _to_set(course, qs, f"?upload={upload.pk}")


@course_action(staff=True)
def grade(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """Staff start a grading pass over every stored answer."""
    qs = _set(course, key)
    with errors_as_messages(request):
        run = passes.run_create(actor=request.user, question_set=qs)
        p = passes.progress(run)
        messages.success(request, f"Grading run #{run.pk}, pass {p['pass']}: {p['status']}.")
    return _to_set(course, qs)


def _release(request: AuthedRequest, course: Course, key: str, *, released: bool) -> HttpResponse:
    qs = _set(course, key)
    with errors_as_messages(request):
        passes.release(actor=request.user, question_set=qs, released=released)
        messages.success(
            request,
            "Results released to students." if released else "Results hidden from students.",
        )
    return _to_set(course, qs)


@course_action(staff=True)
def results_release(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """Staff show the grades and keys to students."""
    return _release(request, course, key, released=True)


@course_action(staff=True)
def results_hide(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """Staff hide the results from students again."""
    return _release(request, course, key, released=False)


def _staff_set(
    request: AuthedRequest, course: Course, qs: QuestionSet, form: UploadForm
) -> HttpResponse:
    upload_id = request.GET.get("upload", "")
    shown = (
        AnswerUpload.objects.filter(question_set=qs, pk=int(upload_id)).first()
        if upload_id.isdigit()
        else AnswerUpload.objects.filter(question_set=qs)
        .exclude(status=AnswerUpload.Status.COMMITTED)
        .first()
    )
    preview = uploads.progress(shown) if shown else None
    questions = []
    every = list(qs.questions.order_by("position"))
    hand = [q for q in every if q.kind == Question.Kind.WRITTEN]
    # A TA who was given written questions sees theirs unless they ask for all (?all=1).
    shared = fairgrading.questions_shared_with(qs, request.user) if hand else set()
    mine = {q.pk for q in hand if q.grader_id == request.user.pk} | shared
    mine_only = request.GET.get("all") != "1" and bool(mine)
    shown_qs = [
        q for q in every if not mine_only or q.kind != Question.Kind.WRITTEN or q.pk in mine
    ]
    for q in shown_qs:
        try:
            params, keys = services.preview(q)
        except rules.KeyError_ as exc:
            params, keys, problem = dict(q.params or {}), [], str(exc)
        else:
            problem = ""
        questions.append(
            {
                "q": q,
                "prompt": services.prompt_of(q, params),
                "params": params,
                "parts": services.preview_parts(q, params, keys) if keys else [],
                "params_text": ", ".join(f"{k} = {v}" for k, v in params.items()),
                "problem": problem,
                "rubric": rules.rubric_text(q.rubric, q.rubric_spec)
                if q.kind not in (Question.Kind.CHOICE, Question.Kind.WRITTEN)
                else "",
            }
        )
    return render(
        request,
        "autograder/set_staff.html",
        {
            "course": course,
            "qs": qs,
            "questions": questions,
            "form": form,
            "preview": preview,
            "upload": shown,
            "runs": GradingRun.objects.filter(question_set=qs),
            "answers": Answer.objects.filter(question__question_set=qs).count(),
            "written": _written_rows(request, course, qs, hand, mine if mine_only else None),
        },
    )


DISAGREEMENTS_PER_PAGE = 20


def _written_rows(
    request: AuthedRequest,
    course: Course,
    qs: QuestionSet,
    hand: list[Question],
    mine: set[int] | None,
) -> dict[str, Any]:
    """The set page's written-grading card: each question's graded / answered and grader, a
    split question's graders with their progress (and, for instructors, the agreement of the
    answers graded twice), and who showed names again (the rows the API gives at
    …/question-sets/<key>/written/)."""
    mine_only = mine is not None
    rows = [r for r in (written.grading_rows(qs) if hand else []) if mine is None or r.q.pk in mine]
    instructor = is_instructor(request.user, course)
    splits = fairgrading.split_views(qs, with_agreement=instructor) if hand else {}
    return {
        "rows": [(r, splits.get(r.q.pk)) for r in rows],
        "any": bool(hand),
        "graders": written.graders_of(course) if hand else [],
        "mine_only": mine_only,
        "others": len(hand) - len(rows),
        "may_reveal": reveal.may_reveal(request.user, course),
        "head_tas_allowed": reveal.policy_of(course).reveal_names == "head_tas",
        "reveals": reveal.name_reveals(qs) if hand else [],
        "split_forms": views_fair.split_forms(course, [r.q for r in rows]),
        "instructor": instructor,
        # Instructors: every overlap answer scored differently, by question then answer number,
        # 20 a page (the API gives them on each split).
        "disagreements": Paginator(
            [d for r in rows if r.q.pk in splits for d in splits[r.q.pk].disagreements],
            DISAGREEMENTS_PER_PAGE,
        ).get_page(request.GET.get("disagreements"))
        if instructor
        else None,
    }


def student_set(request: AuthedRequest, course: Course, qs: QuestionSet) -> HttpResponse:
    questions = list(qs.questions.order_by("position"))
    mine = {
        (a.question_id, a.part): a
        for a in Answer.objects.filter(question__question_set=qs, student=request.user)
    }
    released = qs.released_at is not None and qs.released_at <= timezone.now()
    run = released_run(qs) if released else None
    grades = {g.question_id: g for g in visible_grades(run).filter(student=request.user)}
    asked = views_regrades.mine(qs, request.user) if released else {}
    closes = regrades.window_closes(qs)
    can_ask = released and closes is not None and timezone.now() <= closes
    checked = practice.last_attempts(qs, request.user) if qs.checks else {}
    rows = []
    for q in questions:
        params = services.params_of(q, request.user)
        rows.append(
            {
                "q": q,
                "prompt": services.prompt_of(q, params),
                "parts": [(i, p, mine.get((q.pk, i))) for i, p in enumerate(q.parts)]
                if q.parts
                else [(0, {}, mine.get((q.pk, 0)))],
                "grade": grades.get(q.pk),
                "worked": services.worked_solution(q, params) if released and q.parts else None,
                "rubric": rules.rubric_text(q.rubric, q.rubric_spec) if len(q.parts) > 1 else "",
                "max_chars": written.max_chars_of(q),
                "regrades": asked.get(q.pk, []),
                "can_ask": can_ask
                and grades.get(q.pk) is not None
                and not any(r.status == "open" for r in asked.get(q.pk, [])),
                "last_check": checked.get(q.pk, (None, 0))[0],
                "checks_left": max(qs.checks - checked.get(q.pk, (None, 0))[1], 0),
            }
        )
    return render(
        request,
        "autograder/set_student.html",
        {
            "course": course,
            "qs": qs,
            "state": set_states(course=course, sets=[qs], student=request.user)[0],
            "rows": rows,
            "released": released,
            "regrade_closes": closes if can_ask else None,
        },
    )


@login_required
def upload_progress(request: AuthedRequest, code: str, key: str, upload_id: int) -> JsonResponse:
    """An answers upload's progress for the page's bar (staff)."""
    course = course_for(request, code, staff=True)
    upload = AnswerUpload.objects.filter(question_set=_set(course, key), pk=upload_id).first()
    if upload is None:
        raise Http404("No such upload.")
    return JsonResponse(uploads.progress(upload))


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


@login_required
def run_progress(request: AuthedRequest, code: str, run_id: int) -> JsonResponse:
    course = course_for(request, code, staff=True)
    run = GradingRun.objects.filter(question_set__course=course, pk=run_id).first()
    if run is None:
        raise Http404("No such run.")
    return JsonResponse(passes.progress(run))


@login_required
def run_results(request: AuthedRequest, code: str, run_id: int) -> HttpResponse:
    course = course_for(request, code, staff=True)
    run = (
        GradingRun.objects.filter(question_set__course=course, pk=run_id)
        .select_related("question_set")
        .first()
    )
    if run is None:
        raise Http404("No such run.")
    fmt = request.GET.get("format")
    if fmt in {"gradescope", "canvas"}:
        body = gradescope_csv(run) if fmt == "gradescope" else canvas_csv(run)
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{run.question_set.key}-run{run.pk}-{fmt}.csv"'
        )
        return response
    # One aggregation of the run's grades feeds the histogram, the count and the page; a search
    # adds a second (paging the lazy query instead aggregated every grade three times).
    everyone = list(totals_rows(run))
    scores = [r["score"] for r in everyone]
    search = request.GET.get("q", "").strip()[:100]
    shown = list(totals_rows(run, q=search)) if search else everyone
    page = Paginator(shown, RESULTS_PER_PAGE).get_page(request.GET.get("page"))
    items, misconceptions = item_analysis(run)
    max_points = sum(q.points for q in run.question_set.questions.all())
    svg = histogram_svg(scores, max_points, title=f"Scores of run {run.pk}")
    return render(
        request,
        "autograder/results.html",
        {
            "progress": passes.progress(run),
            "shown_pass": run.current_pass,
            "course": course,
            "run": run,
            "students": len(scores),
            "page": page,
            "q": search,
            "items": items,
            "misconceptions": misconceptions[:8],
            "histogram": mark_safe(svg),
            "max_points": max_points,
            "review": secondary_credit(run),
        },
    )


@course_action(staff=True)
def names_toggle(request: AuthedRequest, course: Course, key: str) -> HttpResponse:
    """Staff hide the students' names while written answers are graded; instructors (head TAs
    when the course file allows) show them again. Anyone else is refused with a 403 that says
    who may."""
    qs = _set(course, key)
    hidden = request.POST.get("hide") == "1"
    if not hidden and qs.hide_names and not reveal.may_reveal(request.user, course):
        return render(
            request,
            "autograder/refused.html",
            {"course": course, "qs": qs, "why": reveal.reveal_refusal(course)},
            status=403,
        )
    with errors_as_messages(request):
        written.names_hidden_set(actor=request.user, question_set=qs, hidden=hidden)
        messages.success(
            request,
            "Names and e-mails are hidden while written answers are graded."
            if hidden
            else "Names are shown again on the written-answer pages.",
        )
    return _to_set(course, qs)


@course_action(staff=True)
def grader_set(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Staff give one written question to a TA (or to anyone)."""
    qs = _set(course, key)
    with errors_as_messages(request):
        q = qs.questions.filter(key=qkey).first()
        if q is None:
            raise DomainError("No such question in this set.", field="grader")
        raw = request.POST.get("grader", "")
        written.grader_assign(
            actor=request.user, question=q, grader_id=int(raw) if raw.isdigit() else None
        )
        messages.success(request, f"{q.key}: grader saved.")
    return _to_set(course, qs)


def practice_set(request: AuthedRequest, course: Course, qs: QuestionSet) -> HttpResponse:
    """A practice set: each question with the student's current variant, a Check button that
    grades it at once, the last result and New variant."""
    last = practice.last_attempts(qs, request.user)
    after = reveal.policy_of(course).practice_solution_after
    rows = []
    for q in qs.questions.order_by("position"):
        number = practice.variant_of(q, request.user)
        params, _ = practice.variant(q, request.user, number)
        latest, tries = last.get(q.pk, (None, 0))
        rows.append(
            {
                "q": q,
                "prompt": services.prompt_of(q, params),
                "parts": list(enumerate(q.parts)) if q.parts else [(0, {})],
                "last": latest if latest is not None and latest.variant == number else None,
                "tries": tries,
                "drawn": any(isinstance(v, dict) for v in (q.params or {}).values()),
                **views_fair.practice_teaching(q, request.user, number, after),
            }
        )
    return render(
        request,
        "autograder/set_practice.html",
        {"course": course, "qs": qs, "rows": rows, "kept": form_kept(request, "practice")},
    )


def _practice_question(course: Course, key: str, qkey: str) -> Question:
    q = (
        Question.objects.select_related("question_set__course")
        .filter(question_set__course=course, question_set__key=key, key=qkey)
        .first()
    )
    if q is None:
        raise DomainError("No such question in this set.", field="answers")
    return q


@course_action(student=True)
def practice_check(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Grade one practice question at once (right, partly right or not yet)."""
    with errors_as_messages(request, form="practice"):
        q = _practice_question(course, key, qkey)
        n = max(len(q.parts), 1)
        a = practice.check(
            actor=request.user,
            question=q,
            answers={p: request.POST.get(f"{q.key}-{p}", "") for p in range(n)},
        )
        verdict = (
            "right"
            if a.fraction >= 1
            else f"partly right ({a.fraction:.0%})"
            if a.fraction > 0
            else "not right yet"
        )
        messages.success(request, f"{q.key}: {verdict}.")
    return redirect(
        reverse("autograder:set", kwargs={"code": course.code, "key": key}) + f"#q-{qkey}"
    )


@course_action(student=True)
def practice_variant(request: AuthedRequest, course: Course, key: str, qkey: str) -> HttpResponse:
    """Fresh numbers for one practice question."""
    with errors_as_messages(request):
        q = _practice_question(course, key, qkey)
        n = practice.new_variant(actor=request.user, question=q)
        messages.success(request, f"{q.key}: new numbers (variant {n + 1}).")
    return redirect(
        reverse("autograder:set", kwargs={"code": course.code, "key": key}) + f"#q-{qkey}"
    )
