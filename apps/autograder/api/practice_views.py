"""Practice API: check one question's answer at once against your own variant, or draw new
numbers (students; practice sets only)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import practice
from apps.autograder.models import PracticeAttempt, Question
from apps.autograder.reveal import policy_of
from apps.core.api.helpers import api_course, error_responses
from apps.core.errors import NotFound

E = error_responses(
    e409="The set is not a practice set, or the question has fixed numbers and its solution "
    "is not shown yet."
)
TAGS = ["autograder"]


class PracticeCheckInSerializer(serializers.Serializer):
    answers = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=200),
        max_length=10,
        help_text="One raw answer per part, as typed (a choice question: the option's label).",
    )


class SolutionPartSerializer(serializers.Serializer):
    part = serializers.CharField(source="label", help_text="The part's label.")
    value = serializers.JSONField(
        help_text="The correct value in the part's unit (a choice: the correct option); null "
        "for a measurement."
    )
    unit = serializers.CharField()


class SolutionSerializer(serializers.Serializer):
    variant = serializers.IntegerField()
    parts = SolutionPartSerializer(many=True)
    worked = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Per part, the worked solution's steps.",
    )


class PracticeResultSerializer(serializers.Serializer):
    right = serializers.BooleanField()
    fraction = serializers.FloatField()
    points = serializers.FloatField()
    max_points = serializers.FloatField()
    misconception = serializers.CharField(help_text="The known wrong answer this matches, if any.")
    variant = serializers.IntegerField()
    checks = serializers.IntegerField(help_text="Your checks of this question so far.")
    wrong_checks = serializers.IntegerField(help_text="Wrong checks of these numbers.")
    solution_after = serializers.IntegerField(
        help_text="Wrong checks of one variant after which its solution is shown (0: on "
        "request only)."
    )
    solution = SolutionSerializer(
        allow_null=True,
        help_text="Once shown (after the wrong checks, or on request): this variant's correct "
        "value and worked solution; checks of it end, new numbers start afresh.",
    )


class PracticeVariantSerializer(serializers.Serializer):
    variant = serializers.IntegerField()
    prompt = serializers.CharField(help_text="The question with your new numbers.")


def _question(code: str, key: str, qkey: str, request: Request) -> Question:
    _, course = api_course(request, code, student=True)
    q = (
        Question.objects.select_related("question_set__course")
        .filter(question_set__course=course, question_set__key=key, key=qkey)
        .first()
    )
    if q is None:
        raise NotFound("No such question in this set.")
    return q


class PracticeCheckView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Check a practice answer at once (students)",
        request=PracticeCheckInSerializer,
        responses={200: PracticeResultSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        q = _question(code, key, qkey, request)
        s = PracticeCheckInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        answers = dict(enumerate(s.validated_data["answers"]))
        a = practice.check(actor=request.user, question=q, answers=answers)  # type: ignore[arg-type]
        checks = PracticeAttempt.objects.filter(question=q, student_id=a.student_id).count()
        shown = (
            practice.solution_shown(q, request.user)  # type: ignore[arg-type]
            if q.question_set.practice
            else None
        )
        return Response(
            {
                "right": a.fraction >= 1,
                "fraction": a.fraction,
                "points": a.points,
                "max_points": q.points,
                "misconception": a.detail.get("misconception", ""),
                "variant": a.variant,
                "checks": checks,
                "wrong_checks": practice.wrong_checks(q, request.user, a.variant),  # type: ignore[arg-type]
                "solution_after": policy_of(q.question_set.course).practice_solution_after,
                "solution": SolutionSerializer(shown).data if shown else None,
            }
        )


class PracticeVariantView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="New numbers for a practice question (students)",
        request=None,
        responses={200: PracticeVariantSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        q = _question(code, key, qkey, request)
        n = practice.new_variant(actor=request.user, question=q)  # type: ignore[arg-type]
        params, _ = practice.variant(q, request.user, n)  # type: ignore[arg-type]
        try:
            prompt = q.prompt.format(**params)
        except (KeyError, IndexError, ValueError):
            prompt = q.prompt
        return Response({"variant": n, "prompt": prompt})


class PracticeSolutionView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Show the solution of your current practice numbers (students)",
        description="Gives up on this variant: its correct value and worked solution are "
        "returned, its checks end, and new numbers (…/variant/) start afresh.",
        request=None,
        responses={200: SolutionSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        q = _question(code, key, qkey, request)
        solution = practice.solution_show(actor=request.user, question=q)  # type: ignore[arg-type]
        return Response(SolutionSerializer(solution).data)
