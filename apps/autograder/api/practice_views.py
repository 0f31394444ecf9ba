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
from apps.core.api.helpers import api_course, error_responses
from apps.core.errors import NotFound

E = error_responses(e409="The set is not a practice set, or the question has fixed numbers.")
TAGS = ["autograder"]


class PracticeCheckInSerializer(serializers.Serializer):
    answers = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=200),
        max_length=10,
        help_text="One raw answer per part, as typed (a choice question: the option's label).",
    )


class PracticeResultSerializer(serializers.Serializer):
    right = serializers.BooleanField()
    fraction = serializers.FloatField()
    points = serializers.FloatField()
    max_points = serializers.FloatField()
    misconception = serializers.CharField(help_text="The known wrong answer this matches, if any.")
    variant = serializers.IntegerField()
    checks = serializers.IntegerField(help_text="Your checks of this question so far.")


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
        return Response(
            {
                "right": a.fraction >= 1,
                "fraction": a.fraction,
                "points": a.points,
                "max_points": q.points,
                "misconception": a.detail.get("misconception", ""),
                "variant": a.variant,
                "checks": checks,
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
