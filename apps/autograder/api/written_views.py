"""Written answers over the API (staff): the answer groups with their rubric items, and marks
applied to many answers at once."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import written
from apps.autograder.models import Question
from apps.core.api.helpers import PAGE_PARAMETERS, api_course, error_responses, page_response
from apps.core.errors import NotFound

E = error_responses()
TAGS = ["autograder"]


class RubricItemOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    points = serializers.FloatField(help_text="Score change when applied.")
    comment = serializers.CharField()


class AnswerGroupSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="The answer (one of the group's, as written).")
    students = serializers.ListField(child=serializers.IntegerField(), source="student_ids")
    items = serializers.ListField(
        child=serializers.IntegerField(), source="item_ids", help_text="Items every one has."
    )


class WrittenPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = AnswerGroupSerializer(many=True)
    rubric = RubricItemOutSerializer(many=True)


class MarksSerializer(serializers.Serializer):
    students = serializers.ListField(child=serializers.IntegerField(), min_length=1)
    add = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    remove = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)


class MarksResultSerializer(serializers.Serializer):
    students = serializers.IntegerField(help_text="Answers updated.")


def _question(request: Request, code: str, key: str, qkey: str) -> tuple[object, Question]:
    user, course = api_course(request, code, staff=True)
    q = Question.objects.filter(
        question_set__course=course, question_set__key=key, key=qkey, kind=Question.Kind.WRITTEN
    ).first()
    if q is None:
        raise NotFound("No such written question.")
    return user, q


class WrittenView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="A written question's answers, identical ones grouped, with its rubric (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: WrittenPageSerializer, **E},
    )
    def get(self, request: Request, code: str, key: str, qkey: str) -> Response:
        _, q = _question(request, code, key, qkey)
        groups = written.answer_groups(q, q=request.query_params.get("q", ""))
        response = page_response(
            request, groups, lambda p: AnswerGroupSerializer(p, many=True).data
        )
        response.data["rubric"] = RubricItemOutSerializer(q.rubric_items.all(), many=True).data
        return response


class MarksView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Apply or take off rubric items on many students' written answers (staff)",
        request=MarksSerializer,
        responses={200: MarksResultSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        user, q = _question(request, code, key, qkey)
        data = MarksSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        n = written.marks_apply(
            actor=user,  # type: ignore[arg-type]
            question=q,
            student_ids=data.validated_data["students"],
            add=data.validated_data["add"],
            remove=data.validated_data["remove"],
        )
        return Response({"students": n})
