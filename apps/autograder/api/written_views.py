"""Written answers over the API (staff): the answer groups with their rubric items, marks
applied to many answers at once, and who grades what (graders, names hidden): the same services
and permissions as the set's page."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.autograder import fairgrading, reveal, written
from apps.autograder.models import Question, QuestionSet
from apps.core.api.helpers import PAGE_PARAMETERS, api_course, error_responses, page_response
from apps.core.errors import NotFound
from apps.core.models import User
from apps.core.permissions import is_instructor

E = error_responses()
TAGS = ["autograder"]


class RubricItemOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    points = serializers.FloatField(help_text="Score change when applied.")
    comment = serializers.CharField()


class AnswerGroupSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="The answer (one of the group's, as written).")
    students = serializers.ListField(
        child=serializers.CharField(),
        source="keys",
        help_text="The answers' keys, to send back to marks/: account ids, or, while the set "
        "grades without names, keys that name nobody (the same for every question of the set).",
    )
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
    students = serializers.ListField(
        child=serializers.CharField(max_length=40),
        min_length=1,
        help_text="The answers' keys as the answer groups give them (account ids, or anonymous "
        "keys while names are hidden).",
    )
    add = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    remove = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    second = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: your own second grading of overlap answers given to you (never "
        "counted; the first grader's marks count).",
    )


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
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter(
                "share",
                str,
                enum=["all", "mine", "second"],
                description="A split question: all answers (without those you grade second), "
                "yours to grade first, or yours to grade second (with your own marks).",
            ),
        ],
        responses={200: WrittenPageSerializer, **E},
    )
    def get(self, request: Request, code: str, key: str, qkey: str) -> Response:
        user, q = _question(request, code, key, qkey)
        first, second = fairgrading.share_of(q, user)  # type: ignore[arg-type]
        share = request.query_params.get("share", "all")
        groups = written.answer_groups(
            q,
            q=request.query_params.get("q", ""),
            hide_names=q.question_set.hide_names,
            only=first if share == "mine" else second if share == "second" else None,
            without=second if share != "second" else None,
            second_grader=user.pk if share == "second" else None,  # type: ignore[attr-defined]
        )
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
        student_ids, unknown = written.students_of_keys(q, data.validated_data["students"])
        if unknown:
            raise serializers.ValidationError(
                {"students": [f"Not an answer to this question: {k}" for k in unknown[:10]]}
            )
        apply = (
            fairgrading.second_marks_apply if data.validated_data["second"] else written.marks_apply
        )
        n = apply(
            actor=user,  # type: ignore[arg-type]
            question=q,
            student_ids=student_ids,
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


class GraderProgressSerializer(serializers.Serializer):
    grader = StaffMemberSerializer()
    share = serializers.IntegerField(help_text="Answers given to them to grade (first).")
    graded = serializers.IntegerField(help_text="Of those, answers with a mark.")
    second_share = serializers.IntegerField(help_text="Overlap answers they grade second.")
    second_graded = serializers.IntegerField()


class AgreementSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Overlap answers both graders marked.")
    exact = serializers.IntegerField(help_text="Of those, with the same score.")
    within_step = serializers.IntegerField(
        help_text="Of those, scores at most one rubric step apart (the smallest item's change)."
    )


class DisagreementSerializer(serializers.Serializer):
    answer = serializers.IntegerField(
        source="number", help_text="The answer's number in the split (1…n, as ranges count)."
    )
    student = serializers.CharField(
        source="key",
        help_text="The answer's key (an account id, or an anonymous key while names are "
        "hidden); the page opens it with …/written/<question>/?answer=<key>.",
    )
    first_score = serializers.FloatField(source="first", help_text="The score that counts.")
    first_grader = StaffMemberSerializer(allow_null=True)
    second_score = serializers.FloatField(source="second")
    second_grader = StaffMemberSerializer()


class SplitOutSerializer(serializers.Serializer):
    question = serializers.CharField(source="question.key")
    graders = GraderProgressSerializer(many=True)
    unassigned = serializers.IntegerField(help_text="Answers saved after the split: nobody's.")
    agreement = AgreementSerializer(
        allow_null=True, help_text="Instructors only (null for TAs): the overlap's agreement."
    )
    disagreements = DisagreementSerializer(
        many=True,
        help_text="Instructors only (empty for TAs): the overlap answers the two graders scored "
        "differently, by answer number (at most the overlap the instructor chose; the set's "
        "page shows them 20 a page).",
    )


class RevealSerializer(serializers.Serializer):
    by = serializers.CharField(source="actor.email", allow_null=True)
    at = serializers.DateTimeField(source="created_at")


class GradingSerializer(serializers.Serializer):
    set = serializers.CharField()
    hide_names = serializers.BooleanField(
        help_text="Anonymous grading: the written-answer pages and API show no names."
    )
    may_reveal = serializers.BooleanField(
        help_text="Whether you may show names again (instructors; head TAs if the course allows)."
    )
    names_shown = RevealSerializer(many=True, help_text="Who showed names again, and when.")
    questions = GradingRowSerializer(many=True)
    splits = SplitOutSerializer(many=True, help_text="Questions split among several graders.")
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
        user, qs = _set(request, code, key)
        rows = written.grading_rows(qs)
        splits = fairgrading.split_views(qs, with_agreement=is_instructor(user, qs.course))
        return Response(
            GradingSerializer(
                {
                    "set": qs.key,
                    "hide_names": qs.hide_names,
                    "may_reveal": reveal.may_reveal(user, qs.course),
                    "names_shown": reveal.name_reveals(qs),
                    "questions": rows,
                    "splits": [splits[r.q.pk] for r in rows if r.q.pk in splits],
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


class SplitInSerializer(serializers.Serializer):
    graders = serializers.ListField(
        child=serializers.IntegerField(),
        min_length=1,
        max_length=50,
        help_text="User ids of the course's TAs or instructors who share the answers, in order.",
    )
    ranges = serializers.ListField(
        child=serializers.CharField(max_length=20),
        required=False,
        default=list,
        max_length=50,
        help_text='Empty: evenly. Otherwise one range per grader, e.g. ["1-12", "13-20"]; '
        "answers are numbered in the order they were first saved.",
    )
    overlap = serializers.IntegerField(
        min_value=0,
        max_value=10000,
        required=False,
        default=0,
        help_text="Answers also graded, independently, by the next grader in the list.",
    )


class SplitResultSerializer(serializers.Serializer):
    question = serializers.CharField()
    answers = serializers.IntegerField()
    shares = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="[grader id, first answer, last answer] per grader.",
    )
    overlap = serializers.IntegerField()


class SplitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Split a written question's answers among several graders, with an optional "
        "overlap graded twice (staff)",
        request=SplitInSerializer,
        responses={200: SplitResultSerializer, **E},
    )
    def post(self, request: Request, code: str, key: str, qkey: str) -> Response:
        user, q = _question(request, code, key, qkey)
        data = SplitInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        done = fairgrading.split_save(
            actor=user,  # type: ignore[arg-type]
            question=q,
            grader_ids=data.validated_data["graders"],
            ranges=data.validated_data["ranges"] or None,
            overlap=data.validated_data["overlap"],
        )
        return Response(
            {
                "question": q.key,
                "answers": done.answers,
                "shares": [list(s) for s in done.shares],
                "overlap": done.overlap,
            }
        )
