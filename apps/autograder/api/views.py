"""Autograder API. Students: their own questions (with their parameters), their answers, and after
release their grades with keys. Staff: CSV upload (preview or commit), runs, progress, results."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import passes, services, uploads
from apps.autograder.models import Answer, GradingRun, QuestionSet
from apps.autograder.selectors import item_analysis, released_run, totals_rows, visible_grades
from apps.autograder.setstate import SetState, question_set_list
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import DomainError, NotFound
from apps.core.models import Course, User
from apps.core.timefmt import format_instant, to_course_tz

E = error_responses()
TAGS = ["autograder"]
ANY = OpenApiResponse(description="JSON; see the summary.")


def _ctx(
    request: Request,
    code: str,
    key: str | None = None,
    *,
    staff: bool = False,
    student: bool = False,
) -> tuple[User, Course, QuestionSet | None]:
    user, course = api_course(request, code, staff=staff, student=student)
    qs = None
    if key is not None:
        qs = QuestionSet.objects.filter(course=course, key=key).first()
        if qs is None:
            raise NotFound("No such question set.")
    return user, course, qs


class AnswerSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="Question key, e.g. q6.")
    answers = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        help_text='Part index → raw text, e.g. {"0": "40", "1": "100"}.',
    )


class SetRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    assignment = serializers.CharField(allow_null=True, help_text="Its assignment's code.")
    released = serializers.BooleanField(help_text="Results and keys are out to students.")
    state = serializers.ChoiceField(
        choices=["open", "closed", "not-released", "results", "practice"],
        help_text="As the list page shows it: takes answers, closed, not released yet, results "
        "released, or practice (checked at once, never graded).",
    )
    state_label = serializers.CharField(help_text="The state in the page's words.")
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    due = serializers.DateTimeField(
        allow_null=True,
        help_text="A student's own deadline (slack days and extensions applied); staff: the "
        "base deadline. ISO 8601 in course time.",
    )
    due_text = serializers.CharField(allow_null=True, help_text="`due` as the page writes it.")
    base_due = serializers.DateTimeField(allow_null=True, help_text="The assignment's deadline.")
    moved = serializers.BooleanField(help_text="The student's deadline differs from the base.")
    opens = serializers.DateTimeField(
        allow_null=True, help_text="When its assignment is released, while that is ahead."
    )
    questions = serializers.IntegerField()
    answered = serializers.IntegerField(
        allow_null=True,
        help_text="Questions the student answered; a practice set: answered correctly (the last "
        "check right). Staff: null.",
    )
    score = serializers.FloatField(allow_null=True, help_text="Released score (staff: null).")
    max_points = serializers.FloatField(allow_null=True)


def _course_time(value: dt.datetime | None, zone: str) -> str | None:
    return None if value is None else to_course_tz(value, zone).isoformat()


def set_row(state: SetState, course: Course, *, staff: bool) -> dict[str, Any]:
    """One row of the question-set list, from the same `SetState` the page renders."""
    s, zone = state.qs, course.timezone
    return {
        "key": s.key,
        "title": s.title,
        "assignment": s.assignment.code if s.assignment else None,
        "released": s.released_at is not None and s.released_at <= timezone.now(),
        "state": state.state,
        "state_label": state.label,
        "timezone": zone,
        "due": _course_time(state.due, zone),
        "due_text": format_instant(state.due, zone) if state.due else None,
        "base_due": _course_time(state.base_due, zone),
        "moved": state.moved,
        "opens": _course_time(state.opens, zone),
        "questions": state.questions,
        "answered": None if staff else state.answered,
        "score": None if staff else state.score,
        "max_points": None if staff else state.max_points,
    }


class SetListView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Question sets of the course, as the list page shows them",
        description="Students: each set with their own deadline (slack days and extensions "
        "applied), its state, how many questions they answered and, once released, their score. "
        "Staff: base deadlines and question counts. Times are ISO 8601 in the course's zone.",
        responses={200: SetRowSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course, _ = _ctx(request, code)
        staff, rows = question_set_list(user=user, course=course)
        return Response([set_row(r, course, staff=staff) for r in rows])


class MineView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your questions with your own parameters, your answers, and (after release) your "
        "grades and keys",
        responses={200: ANY, **E},
    )
    def get(self, request: Request, code: str, key: str) -> Response:
        user, _course, qs = _ctx(request, code, key)
        assert qs is not None  # noqa: S101
        released = qs.released_at is not None and qs.released_at <= timezone.now()
        run = released_run(qs) if released else None
        grades = {g.question_id: g for g in visible_grades(run).filter(student=user)}
        answers: dict[int, dict[int, str]] = {}
        for a in Answer.objects.filter(question__question_set=qs, student=user):
            answers.setdefault(a.question_id, {})[a.part] = a.raw
        out = []
        for q in qs.questions.order_by("position"):
            params = services.params_of(q, user)
            item: dict[str, Any] = {
                "key": q.key,
                "kind": q.kind,
                "points": q.points,
                "prompt": services.prompt_of(q, params),
                "params": params,
                "parts": [p.get("label", "") for p in q.parts],
                "options": [{"label": o["label"], "text": o["text"]} for o in q.options],
                "answers": answers.get(q.pk, {}),
            }
            if released and q.pk in grades:
                g = grades[q.pk]
                item |= {
                    "score": g.score,
                    "max_points": g.max_points,
                    "detail": g.detail,
                    "worked_solution": services.worked_solution(q, params) if q.parts else None,
                }
            out.append(item)
        return Response({"set": qs.key, "released": released, "questions": out})


class AnswerView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Submit your answer to one question (until your deadline)",
        request=AnswerSerializer,
        responses={200: ANY, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, _course, qs = _ctx(request, code, key, student=True)
        d = AnswerSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        q = qs.questions.filter(key=d.validated_data["question"]).first() if qs else None
        if q is None:
            raise NotFound("No such question in this set.", field="question")
        try:
            parts = {int(k): v for k, v in d.validated_data["answers"].items()}
        except ValueError:
            raise DomainError("Answer parts are numbered 0, 1, …", field="answers") from None
        stored = services.answer_submit(actor=user, question=q, answers=parts, source="api")
        return Response(
            [{"part": a.part, "raw": a.raw, "status": a.status, "value": a.value} for a in stored]
        )


class UploadView(APIView):
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(
        tags=TAGS,
        summary="Upload answers as CSV (staff): a worker previews it, or stores it with ?commit=1",
        description="202 with the upload's progress; poll GET …/uploads/<id>/ until `final`, then "
        "read the preview (mapping, counts, every skipped row) and confirm with POST "
        "…/uploads/<id>/commit/.",
        parameters=[
            OpenApiParameter(
                "commit", bool, description="Store the answers without waiting for a confirmation."
            )
        ],
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
            }
        },
        responses={202: ANY, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, _course, qs = _ctx(request, code, key, staff=True)
        upload = request.FILES.get("file")
        if upload is None or qs is None:
            raise DomainError("Attach the CSV as the form field 'file'.", field="file")
        stored = uploads.upload_create(
            actor=user,
            question_set=qs,
            filename=upload.name or "answers.csv",
            data=upload.read(),
            commit=request.query_params.get("commit") in {"1", "true"},
        )
        stored.refresh_from_db()  # an eager task (no broker configured) has already finished
        return Response(uploads.progress(stored), status=202)


class UploadDetailView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="An answers upload: progress, then the preview or the import's report (staff)",
        responses={200: ANY, **E},
    )
    def get(self, request: Request, code: str, key: str, upload_id: int) -> Response:
        _user, _course, qs = _ctx(request, code, key, staff=True)
        assert qs is not None  # noqa: S101
        return Response(uploads.progress(uploads.upload_get(question_set=qs, upload_id=upload_id)))


class UploadCommitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Store a previewed upload's answers (staff); 409 until the preview is ready",
        request=None,
        responses={202: ANY, **E},
    )
    def post(self, request: Request, code: str, key: str, upload_id: int) -> Response:
        user, _course, qs = _ctx(request, code, key, staff=True)
        assert qs is not None  # noqa: S101
        upload = uploads.upload_commit(actor=user, question_set=qs, upload_id=upload_id)
        upload.refresh_from_db()
        return Response(uploads.progress(upload), status=202)


class RunsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Start grading (staff): a changed key makes a new run; an unchanged key a new pass",
        description="202 with the run's progress. A pass already running is returned, not doubled. "
        "Results keep showing the last complete pass until the new one has finished every chunk.",
        request=None,
        responses={202: ANY, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, _course, qs = _ctx(request, code, key, staff=True)
        assert qs is not None  # noqa: S101
        run = passes.run_create(actor=user, question_set=qs)
        return Response({"id": run.pk, **passes.progress(run)}, status=202)


class ReleaseSerializer(serializers.Serializer):
    released = serializers.BooleanField(
        help_text="true shows results and keys to students; false hides them again."
    )


class ReleaseView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Release (or hide) results and keys to students (staff)",
        description="409 while a grading pass of the set is still running: students only ever see "
        "complete passes.",
        request=ReleaseSerializer,
        responses={200: ANY, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, _course, qs = _ctx(request, code, key, staff=True)
        assert qs is not None  # noqa: S101
        d = ReleaseSerializer(data=request.data)
        d.is_valid(raise_exception=True)
        qs = passes.release(actor=user, question_set=qs, released=d.validated_data["released"])
        return Response({"set": qs.key, "released_at": qs.released_at})


class TotalRowSerializer(serializers.Serializer):
    email = serializers.EmailField()
    name = serializers.CharField()
    score = serializers.FloatField()
    max = serializers.FloatField()


class RunTotalsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Each student's total in a run's shown pass, by name, paged (staff)",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter("q", str, description="Name or email contains."),
        ],
        responses={200: paginated(TotalRowSerializer), **E},
    )
    def get(self, request: Request, code: str, run_id: int) -> Response:
        _, course, _ = _ctx(request, code, staff=True)
        run = GradingRun.objects.filter(question_set__course=course, pk=run_id).first()
        if run is None:
            raise NotFound("No such run.")
        rows = totals_rows(run, q=request.query_params.get("q", "").strip())
        return page_response(
            request,
            rows,
            lambda page: [
                {
                    "email": r["student__email"],
                    "name": r["student__full_name"],
                    "score": r["score"],
                    "max": r["max"],
                }
                for r in page
            ],
        )


class RunView(APIView):
    @extend_schema(
        tags=TAGS,
        summary=(
            "A run's progress and, with ?results=1, item analysis and the score summary (staff)"
        ),
        description="Per-student totals are paged at GET …/grading-runs/<id>/totals/.",
        responses={200: ANY, **E},
    )
    def get(self, request: Request, code: str, run_id: int) -> Response:
        _, course, _ = _ctx(request, code, staff=True)
        run = GradingRun.objects.filter(question_set__course=course, pk=run_id).first()
        if run is None:
            raise NotFound("No such run.")
        body: dict[str, Any] = {"id": run.pk, **passes.progress(run)}
        if request.query_params.get("results") in {"1", "true"}:
            items, misconceptions = item_analysis(run)
            summary = totals_rows(run).aggregate(students=Count("student_id"))
            body["students"] = summary["students"]
            body["totals_url"] = request.build_absolute_uri(
                reverse("autograder-api:run-totals", kwargs={"code": code, "run_id": run.pk})
            )
            body["items"] = [
                {
                    "question": i.question.key,
                    "goal": i.question.goal,
                    "points": i.question.points,
                    "mean": i.mean,
                    "share_correct": i.share_correct,
                    "wrong": i.wrong,
                    "distractors": i.distractors,
                    "implausible": i.implausible,
                }
                for i in items
            ]
            body["misconceptions"] = misconceptions
        return Response(body)
