"""Questionnaire pages. Students: the questions and their answers, editable until the close.
Staff: the summary with a picture per question, the window and the questions; people (who has
answered, interests and teammate wishes, enrollment decisions, reminders); suggested groups."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpResponseNotAllowed
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.calendar.views import local_to_utc
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course, Role, User
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant
from apps.core.views_helpers import (
    course_action,
    course_for,
    errors_as_messages,
    redirect_with_back_query,
    typed_int,
)
from apps.core.views_helpers import int_or_none as _int
from apps.onboarding import charts, rules, services
from apps.onboarding.models import (
    DECISIONS,
    KINDS,
    EnrollmentDecision,
    GroupSuggestion,
    QuestionnaireResponse,
)

PAGE = 50


@login_required
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Students answer the questionnaire here (GET shows it, POST saves the answers); staff see
    the set-up and the counts, and change them through the action views below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        return _staff(request, course)
    return _student(request, course)


def _student(request: AuthedRequest, course: Course) -> HttpResponseBase:
    q = services.questionnaire_get(course)
    problems: dict[str, str] = {}
    response = (
        QuestionnaireResponse.objects.filter(questionnaire=q, student=request.user).first()
        if q
        else None
    )
    answers: dict[str, Any] = dict(response.answers) if response else {}
    if request.method == "POST" and q is not None:
        raw = {
            x.key: request.POST.getlist(x.key)
            if x.kind == "multiple"
            else request.POST.get(x.key, "")
            for x in q.questions.all()
        }
        try:
            services.response_save(actor=request.user, course=course, raw=raw)
            messages.success(
                request, "Saved. You can change your answers until the questionnaire closes."
            )
            return redirect("onboarding:page", code=course.code)
        except DomainError as exc:
            problems = exc.problems if isinstance(exc, services.AnswerProblems) else {}
            messages.error(request, exc.message)
            answers = {k: v for k, v in raw.items() if v}
    decision = EnrollmentDecision.objects.filter(course=course, student=request.user).first()
    now = timezone.now()
    questions = (
        [(x, answers.get(x.key), problems.get(x.key)) for x in q.questions.all()] if q else []
    )
    return render(
        request,
        "onboarding/student.html",
        {
            "course": course,
            "q": q,
            "questions": questions,
            "response": response,
            "decision": decision,
            "open": q is not None and q.opens_at <= now <= q.closes_at,
            "before": q is not None and now < q.opens_at,
            "scale": ["1", "2", "3", "4", "5"],
        },
    )


@course_action(staff=True)
def questionnaire_create(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff create the questionnaire with the standard questions."""
    with errors_as_messages(request):
        services.questionnaire_setup(actor=request.user, course=course)
        messages.success(request, "The questionnaire is ready with the standard questions.")
    return redirect("onboarding:page", code=course.code)


def _local_field(request: AuthedRequest, course: Course, name: str) -> dt.datetime:
    try:
        return local_to_utc(dt.datetime.fromisoformat(request.POST.get(name, "")), course.tz)
    except (ValueError, OverflowError):
        raise DomainError("Give both times as a date and a time.", field=name) from None


@course_action(staff=True)
def questionnaire_window(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff set when the questionnaire opens and closes (course time) and its introduction."""
    with errors_as_messages(request):
        services.questionnaire_update(
            actor=request.user,
            course=course,
            opens_at=_local_field(request, course, "opens_at"),
            closes_at=_local_field(request, course, "closes_at"),
            intro=request.POST.get("intro", ""),
        )
        messages.success(request, "Saved.")
    return redirect("onboarding:page", code=course.code)


@course_action(staff=True)
def question_add(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff add a question (choice, scale, text or teammates)."""
    with errors_as_messages(request):
        services.question_add(
            actor=request.user,
            course=course,
            kind=request.POST.get("kind", ""),
            prompt=request.POST.get("prompt", ""),
            help_text=request.POST.get("help", ""),
            options=request.POST.get("options", "").split("\n"),
            required=request.POST.get("required") == "on",
        )
        messages.success(request, "Question added.")
    return redirect("onboarding:page", code=course.code)


@course_action(staff=True)
def question_remove(request: AuthedRequest, course: Course, question_id: int) -> HttpResponseBase:
    """Staff remove a question nobody has answered yet."""
    with errors_as_messages(request):
        services.question_remove(actor=request.user, course=course, question_id=question_id)
        messages.success(request, "Question removed.")
    return redirect("onboarding:page", code=course.code)


def _staff(request: AuthedRequest, course: Course) -> HttpResponseBase:
    q = services.questionnaire_get(course)
    ctx: dict[str, Any] = {"course": course, "q": q, "kinds": KINDS}
    if q is not None:
        responses = list(
            QuestionnaireResponse.objects.filter(questionnaire=q).values_list("answers", flat=True)
        )
        total = User.objects.filter(
            memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
        ).count()
        summary = []
        for x in q.questions.all():
            answered, rows = rules.tally(x.key, x.kind, x.options, responses)
            svg = None
            if rows:  # the bars, and their numbers as a table for a screen reader or a copy
                svg = mark_safe(charts.bars_svg(x.prompt, rows))
            summary.append((x, answered, svg, rows))
        local = "%Y-%m-%dT%H:%M"
        ctx |= {
            "summary": summary,
            "responded": len(responses),
            "total": total,
            "counts": services.decision_counts(course),
            "opens_local": q.opens_at.astimezone(course.tz).strftime(local),
            "closes_local": q.closes_at.astimezone(course.tz).strftime(local),
        }
    return render(request, "onboarding/staff.html", ctx)


def _back_to_people(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """The people list with the filters the form was sent from (its `back` field)."""
    here = reverse("onboarding:people", kwargs={"code": course.code})
    return redirect_with_back_query(request, here)


@course_action(staff=True)
def people_remind(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff e-mail every student who has not answered (at most once per 10 minutes)."""
    with errors_as_messages(request):
        n = services.remind_unanswered(actor=request.user, course=course)
        messages.success(request, f"Reminder e-mailed to {n} student(s).")
    return _back_to_people(request, course)


@course_action(staff=True)
def decision_set(request: AuthedRequest, course: Course, user_id: int) -> HttpResponseBase:
    """Staff admit, waitlist or decline a student, with a note; the student is e-mailed."""
    with errors_as_messages(request):
        d = services.decision_set(
            actor=request.user,
            course=course,
            student_id=user_id,
            decision=request.POST.get("decision", ""),
            note=request.POST.get("note", ""),
        )
        who = d.student.get_full_name() or d.student.email
        messages.success(request, f"{who}: {d.get_decision_display().lower()} (e-mailed).")
    return _back_to_people(request, course)


def _people_csv(course: Course, q: Any, students: Any) -> HttpResponseBase:
    """The students the filters show, with what the page shows of each: whether they answered,
    their interests and teammate wishes, and the enrollment decision with its note and time (in
    course time, the zone named). Three queries, whatever the class size."""
    answers = (
        dict(
            QuestionnaireResponse.objects.filter(questionnaire=q).values_list(
                "student_id", "answers"
            )
        )
        if q
        else {}
    )
    roles = {x.key: x.role for x in q.questions.all()} if q else {}
    decided = {d.student_id: d for d in EnrollmentDecision.objects.filter(course=course)}

    def line(u: User) -> list[Any]:
        a = answers.get(u.pk)
        pick = {roles.get(k): v for k, v in (a or {}).items() if roles.get(k)}
        d = decided.get(u.pk)
        return [
            u.get_full_name(),
            u.email,
            "yes" if a is not None else "no",
            "; ".join(pick.get("interests", [])),
            "; ".join(pick.get("teammates", [])),
            d.get_decision_display() if d else "",
            d.note if d else "",
            format_instant(d.decided_at, course.timezone) if d else "",
        ]

    header = ["name", "email", "answered", "interests", "teammate wishes", "decision", "note"]
    return csv_response(
        f"{course.code}-questionnaire-people.csv",
        itertools.chain(
            [[*header, "decided"]], (line(u) for u in students.iterator(chunk_size=500))
        ),
    )


@login_required
@require_GET
def people(request: AuthedRequest, code: str) -> HttpResponseBase:
    """Who answered, with filters, and each student's enrollment decision; `?format=csv` downloads
    the students the filters show."""
    course = course_for(request, code, staff=True)
    q = services.questionnaire_get(course)
    show, decision, text = (
        request.GET.get("show", ""),
        request.GET.get("decision", ""),
        request.GET.get("q", "").strip(),
    )
    students = User.objects.filter(
        memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
    ).order_by("full_name", "email")
    answered_ids = QuestionnaireResponse.objects.filter(questionnaire__course=course).values(
        "student_id"
    )
    if show == "unanswered":
        students = students.exclude(pk__in=answered_ids)
    elif show == "answered":
        students = students.filter(pk__in=answered_ids)
    if decision == "undecided":
        students = students.exclude(
            pk__in=EnrollmentDecision.objects.filter(course=course).values("student_id")
        )
    elif decision in dict(DECISIONS):
        students = students.filter(
            pk__in=EnrollmentDecision.objects.filter(course=course, decision=decision).values(
                "student_id"
            )
        )
    if text:
        students = students.filter(Q(full_name__icontains=text) | Q(email__icontains=text))
    if request.GET.get("format") == "csv":
        return _people_csv(course, q, students)
    page_ = Paginator(students, PAGE).get_page(request.GET.get("page"))
    ids = [u.pk for u in page_]
    answers = (
        dict(
            QuestionnaireResponse.objects.filter(questionnaire=q, student_id__in=ids).values_list(
                "student_id", "answers"
            )
        )
        if q
        else {}
    )
    roles = {x.key: x.role for x in q.questions.all()} if q else {}
    decisions = {
        d.student_id: d
        for d in EnrollmentDecision.objects.filter(course=course, student_id__in=ids)
    }
    rows = []
    for u in page_:
        a = answers.get(u.pk)
        pick = {roles.get(k): v for k, v in (a or {}).items() if roles.get(k)}
        rows.append(
            {
                "u": u,
                "answered": a is not None,
                "interests": pick.get("interests", []),
                "teammates": pick.get("teammates", []),
                "decision": decisions.get(u.pk),
            }
        )
    return render(
        request,
        "onboarding/people.html",
        {
            "course": course,
            "q": q,
            "rows": rows,
            "page": page_,
            "show": show,
            "decision": decision,
            "text": text,
            "decisions": DECISIONS,
            "n_unanswered": services.unanswered(course).count(),
        },
    )


def _to_suggestions(course: Course) -> HttpResponseBase:
    return redirect("onboarding:suggestions", code=course.code)


@course_action(staff=True)
def suggestion_make(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """Staff suggest groups from wishes and interests (nothing changes until accepted)."""
    with errors_as_messages(request):
        seed = typed_int(request.POST.get("seed"), "The seed", field="seed")
        made = services.suggestion_make(actor=request.user, course=course, seed=seed or 0)
        if made.status in GroupSuggestion.IN_PROGRESS:
            messages.success(
                request,
                f"Suggesting groups for {made.stats.get('people', 0):,} people on a worker; "
                "this page shows the progress. Nothing changes until you accept them.",
            )
        else:
            messages.success(
                request,
                f"{len(made.groups)} groups suggested. Nothing changes until you accept them."
                if made.groups
                else "Nobody is waiting for a group: every student is in one.",
            )
    return _to_suggestions(course)


@course_action(staff=True)
def suggestion_move(request: AuthedRequest, course: Course, suggestion_id: int) -> HttpResponseBase:
    """Staff move one student to another suggested group."""
    with errors_as_messages(request):
        services.suggestion_move(
            actor=request.user,
            course=course,
            suggestion_id=suggestion_id,
            student_id=_int(request.POST.get("student")) or 0,
            to_group=_int(request.POST.get("to")) or 0,
        )
        messages.success(request, "Moved.")
    return _to_suggestions(course)


@course_action(staff=True)
def suggestion_accept(
    request: AuthedRequest, course: Course, suggestion_id: int
) -> HttpResponseBase:
    """Staff accept the suggestion after confirming: the groups are created (by a worker for a
    large suggestion, while the page waits)."""
    with errors_as_messages(request):
        made = services.suggestion_accept(
            actor=request.user, course=course, suggestion_id=suggestion_id
        )
        if made is None:
            messages.success(
                request,
                "Checked: the suggestion fits. A worker is creating the groups now; this page "
                "shows when they exist.",
            )
        else:
            names = ", ".join(g.name for g in made)
            messages.success(request, f"{len(made)} groups now exist: {names}.")
    return _to_suggestions(course)


@login_required
@require_GET
def suggestions(request: AuthedRequest, code: str) -> HttpResponseBase:
    """The suggested groups, each member with interests and kept wishes."""
    course = course_for(request, code, staff=True)
    people_, together = services.suggestion_pool(course)
    s = services.suggestion_get(course)
    groups_: list[list[dict[str, Any]]] = []
    if s is not None and s.accepted_at is None and s.status == GroupSuggestion.Status.DONE:
        ids = [u for g in s.groups for u in g]
        users = {u.pk: u for u in User.objects.filter(pk__in=ids)}
        wishes, interests = services.suggestion_inputs(course, ids)
        for g in s.groups:
            members = set(g)
            groups_.append(
                [
                    {
                        "u": users[u],
                        "interests": sorted(interests.get(u, [])),
                        "wishes": [
                            (
                                users[w].get_full_name() if w in users else "?",
                                w in members,
                                u in wishes.get(w, frozenset()),
                            )
                            for w in wishes.get(u, frozenset())
                        ],
                    }
                    for u in g
                    if u in users
                ]
            )
    return render(
        request,
        "onboarding/suggestions.html",
        {
            "course": course,
            "pool": len(people_),
            "small_groups": len(together),
            "s": s,
            "in_progress": s is not None and s.status in GroupSuggestion.IN_PROGRESS,
            "accepting": s is not None and s.status == GroupSuggestion.Status.ACCEPTING,
            "stale": s is not None and services.suggestion_stale(course, s),
            "inline_max": settings.SUGGEST_INLINE_MAX,
            "groups": groups_,
            "lo": course.group_min_size,
            "hi": course.group_max_size,
        },
    )
