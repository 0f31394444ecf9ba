"""Written answers over the API (staff): the answer groups with their rubric items, marks
applied to many answers at once, and who grades what (graders, names hidden): the same services
and permissions as the set's page."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import written
from apps.autograder.models import Question, QuestionSet
from apps.core.api.helpers import PAGE_PARAMETERS, api_course, error_responses, page_response
from apps.core.errors import NotFound
from apps.core.models import User

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


class StaffMemberSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    email = serializers.EmailField()
    name = serializers.CharField(source="full_name")


class GradingRowSerializer(serializers.Serializer):
    question = serializers.CharField(source="q.key")
    points = serializers.FloatField(source="q.points")
    grader = StaffMemberSerializer(
        source="q.grader", allow_null=True, help_text="Who grades it; null: anyone."
    )
    graded = serializers.IntegerField(help_text="Students whose answer has a mark.")
    answered = serializers.IntegerField(help_text="Students who answered.")


class GradingSerializer(serializers.Serializer):
    set = serializers.CharField()
    hide_names = serializers.BooleanField(
        help_text="Anonymous grading: the written-answer pages and API show no names."
    )
    questions = GradingRowSerializer(many=True)
    graders = StaffMemberSerializer(many=True, help_text="Who can be given a question.")


def _set(request: Request, code: str, key: str) -> tuple[User, QuestionSet]:
    user, course = api_course(request, code, staff=True)
    qs = QuestionSet.objects.filter(course=course, key=key).select_related("course").first()
    if qs is None:
        raise NotFound("No such question set.")
    return user, qs


class GradingView(APIView):
    @extend_schema(
        tags=TAGS,
        operation_id="courses_question_sets_written_grading_retrieve",
        summary="Who grades which written question, how far each is, and whether names are "
        "hidden (staff)",
        responses={200: GradingSerializer, **E},
    )
    def get(self, request: Request, code: str, key: str) -> Response:
        _, qs = _set(request, code, key)
        rows = written.grading_rows(qs)
        return Response(
            GradingSerializer(
                {
                    "set": qs.key,
                    "hide_names": qs.hide_names,
                    "questions": rows,
                    "graders": written.graders_of(qs.course) if rows else [],
                }
            ).data
        )


class NamesHiddenSerializer(serializers.Serializer):
    hidden = serializers.BooleanField(
        help_text="true hides students' names and e-mails while written answers are graded; "
        "false shows them again."
    )


class NamesHiddenOutSerializer(serializers.Serializer):
    set = serializers.CharField()
    hide_names = serializers.BooleanField()


class NamesHiddenView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Hide (or show again) students' names while written answers are graded (staff)",
        request=NamesHiddenSerializer,
        responses={200: NamesHiddenOutSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str) -> Response:
        user, qs = _set(request, code, key)
        data = NamesHiddenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        written.names_hidden_set(actor=user, question_set=qs, hidden=data.validated_data["hidden"])
        return Response({"set": qs.key, "hide_names": qs.hide_names})


class GraderSerializer(serializers.Serializer):
    grader = serializers.IntegerField(
        allow_null=True,
        help_text="The user id of one of the course's TAs or instructors; null gives the "
        "question to anyone.",
    )


class GraderOutSerializer(serializers.Serializer):
    question = serializers.CharField()
    grader = StaffMemberSerializer(allow_null=True)


class GraderView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Give a written question to one TA or instructor to grade, or to anyone (staff)",
        request=GraderSerializer,
        responses={200: GraderOutSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        user, q = _question(request, code, key, qkey)
        data = GraderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        written.grader_assign(
            actor=user,  # type: ignore[arg-type]
            question=q,
            grader_id=data.validated_data["grader"],
        )
        grader = User.objects.filter(pk=q.grader_id).first() if q.grader_id else None
        return Response(GraderOutSerializer({"question": q.key, "grader": grader}).data)
