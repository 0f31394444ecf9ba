"""Questionnaire API: the questions and your answers (students save theirs until the close),
the summary and people (staff), enrollment decisions, reminders, suggested groups."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import DomainError, NotFound
from apps.core.permissions import is_staff
from apps.onboarding import services
from apps.onboarding.models import (
    DECISIONS,
    EnrollmentDecision,
    GroupSuggestion,
    Question,
    QuestionnaireResponse,
)

E = error_responses(
    e409="Closed (or not open yet), already accepted, or no split into groups of the allowed size."
)
TAGS = ["questionnaire"]


class OnboardingQuestionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Question
        fields = ("id", "key", "kind", "prompt", "help", "options", "required", "role")


class OptionCountSerializer(serializers.Serializer):
    option = serializers.CharField(help_text="An option, or a scale point 1–5.")
    answers = serializers.IntegerField()


class QuestionTallySerializer(serializers.Serializer):
    question = serializers.CharField(help_text="The question's key.")
    prompt = serializers.CharField()
    kind_label = serializers.CharField(help_text="The kind in the page's words.")
    answered = serializers.IntegerField(help_text="Students who answered it.")
    tally = OptionCountSerializer(many=True, help_text="[] for a question without options.")


class QuestionnaireSerializer(serializers.Serializer):
    title = serializers.CharField()
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    questions = OnboardingQuestionSerializer(many=True)
    answers = serializers.DictField(allow_null=True, help_text="Students: your saved answers.")
    responded = serializers.IntegerField(allow_null=True, help_text="Staff: how many answered.")
    decision = serializers.CharField(
        allow_null=True, help_text="Students: your enrollment decision."
    )
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    opens_at_text = serializers.CharField(help_text="`opens_at` as the page writes it.")
    closes_at_text = serializers.CharField(help_text="`closes_at` as the page writes it.")
    summary = QuestionTallySerializer(
        many=True, help_text="Staff: each question's answers counted, as the page shows them."
    )


def _questionnaire(user: Any, course: Any) -> dict[str, Any]:
    q = services.questionnaire_get(course)
    if q is None:
        raise NotFound("This course has no questionnaire yet.")
    staff = is_staff(user, course)
    mine = (
        None
        if staff
        else QuestionnaireResponse.objects.filter(questionnaire=q, student=user)
        .values_list("answers", flat=True)
        .first()
    )
    decision = (
        None
        if staff
        else EnrollmentDecision.objects.filter(course=course, student=user)
        .values_list("decision", flat=True)
        .first()
    )
    from apps.core.timefmt import format_instant
    from apps.onboarding import rules

    summary = []
    if staff:
        responses = list(
            QuestionnaireResponse.objects.filter(questionnaire=q).values_list("answers", flat=True)
        )
        for x in q.questions.all():
            answered, rows = rules.tally(x.key, x.kind, x.options, responses)
            summary.append(
                {
                    "question": x.key,
                    "prompt": x.prompt,
                    "kind_label": x.get_kind_display(),
                    "answered": answered,
                    "tally": [{"option": option, "answers": n} for option, n in rows],
                }
            )
    return {
        "title": q.title,
        "opens_at": q.opens_at,
        "closes_at": q.closes_at,
        "timezone": course.timezone,
        "opens_at_text": format_instant(q.opens_at, course.timezone),
        "closes_at_text": format_instant(q.closes_at, course.timezone),
        "summary": summary,
        "questions": OnboardingQuestionSerializer(q.questions.all(), many=True).data,
        "answers": mine,
        "responded": QuestionnaireResponse.objects.filter(questionnaire=q).count()
        if staff
        else None,
        "decision": decision,
    }


class QuestionnaireView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="The questions; students get their answers and decision, staff the count",
        responses={200: QuestionnaireSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        return Response(_questionnaire(user, course))


class AnswersSerializer(serializers.Serializer):
    answers = serializers.DictField(
        help_text="{question key: value}; a list for several choices, e-mails for teammates."
    )


class AnswersView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Save your answers (students; until the close; every problem by question key)",
        request=AnswersSerializer,
        responses={200: QuestionnaireSerializer, **E},
    )
    def put(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        s = AnswersSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            services.response_save(actor=user, course=course, raw=s.validated_data["answers"])
        except services.AnswerProblems as exc:
            raise serializers.ValidationError(
                {f"answers.{k}": [v] for k, v in exc.problems.items()}
            ) from None
        return Response(_questionnaire(user, course))


class OnboardingPersonSerializer(serializers.Serializer):
    student = serializers.EmailField()
    name = serializers.CharField()
    answered = serializers.BooleanField()
    answers = serializers.DictField(allow_null=True)
    decision = serializers.CharField(allow_null=True)
    decision_label = serializers.CharField(
        allow_null=True, help_text="The decision in the page's words."
    )
    decided_at = serializers.DateTimeField(allow_null=True, help_text="ISO 8601 in course time.")
    decided_at_text = serializers.CharField(
        allow_null=True, help_text="`decided_at` as the page writes it, the zone named."
    )
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    interests = serializers.ListField(
        child=serializers.CharField(), help_text="The answer to the interests question."
    )
    teammates = serializers.ListField(
        child=serializers.CharField(), help_text="The teammates the student wishes for."
    )


class PeopleView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Every student's answers and decision (staff)",
        parameters=[OpenApiParameter("unanswered", bool, required=False), *PAGE_PARAMETERS],
        responses={200: paginated(OnboardingPersonSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        from apps.core.models import Role, User

        students = (
            services.unanswered(course)
            if request.query_params.get("unanswered") in ("1", "true")
            else User.objects.filter(
                memberships__course=course,
                memberships__role=Role.STUDENT,
                memberships__is_active=True,
            ).order_by("full_name", "email")
        )

        from apps.core.timefmt import format_instant, to_course_tz
        from apps.onboarding.models import Questionnaire

        zone = course.timezone
        q = Questionnaire.objects.filter(course=course).first()
        roles = dict(q.questions.values_list("key", "role")) if q else {}

        def picked(a: dict[str, Any] | None, role: str) -> list[str]:
            v: Any = next((x for k, x in (a or {}).items() if roles.get(k) == role), [])
            return [str(x) for x in (v if isinstance(v, list) else [v] if v else [])]

        def render(page: list[Any]) -> list[dict[str, Any]]:
            ids = [u.pk for u in page]
            answers = dict(
                QuestionnaireResponse.objects.filter(
                    questionnaire__course=course, student_id__in=ids
                ).values_list("student_id", "answers")
            )
            decisions = {
                d.student_id: d
                for d in EnrollmentDecision.objects.filter(course=course, student_id__in=ids)
            }

            def decided(u: Any) -> dict[str, Any]:
                d = decisions.get(u.pk)
                return {
                    "decision": d.decision if d else None,
                    "decision_label": d.get_decision_display() if d else None,
                    "decided_at": to_course_tz(d.decided_at, zone).isoformat() if d else None,
                    "decided_at_text": format_instant(d.decided_at, zone) if d else None,
                }

            return [
                {
                    "student": u.email,
                    "name": u.full_name,
                    "answered": u.pk in answers,
                    "answers": answers.get(u.pk),
                    **decided(u),
                    "timezone": zone,
                    "interests": picked(answers.get(u.pk), "interests"),
                    "teammates": picked(answers.get(u.pk), "teammates"),
                }
                for u in page
            ]

        return page_response(request, students, render)


class QuestionnaireRemindedSerializer(serializers.Serializer):
    reminded = serializers.IntegerField(help_text="Students e-mailed.")


class RemindView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="E-mail everyone who has not answered (staff; once per 10 minutes)",
        request=None,
        responses={200: QuestionnaireRemindedSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        return Response({"reminded": services.remind_unanswered(actor=user, course=course)})


class DecisionInSerializer(serializers.Serializer):
    student = serializers.EmailField()
    decision = serializers.ChoiceField(choices=DECISIONS)
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class DecisionView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Admit, waitlist or decline a student; e-mailed (staff)",
        request=DecisionInSerializer,
        responses={200: OnboardingPersonSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = DecisionInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        from apps.core.models import User

        student = User.objects.filter(email__iexact=s.validated_data["student"]).first()
        if student is None:
            raise DomainError("No student of this course has this e-mail.", field="student")
        d = services.decision_set(
            actor=user,
            course=course,
            student_id=student.pk,
            decision=s.validated_data["decision"],
            note=s.validated_data["note"],
        )
        answers = (
            QuestionnaireResponse.objects.filter(questionnaire__course=course, student=student)
            .values_list("answers", flat=True)
            .first()
        )
        return Response(
            {
                "student": student.email,
                "name": student.full_name,
                "answered": answers is not None,
                "answers": answers,
                "decision": d.decision,
            }
        )


class SuggestedMemberSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.EmailField()
    name = serializers.CharField()
    interests = serializers.ListField(child=serializers.CharField())


class GroupSuggestionSerializer(serializers.ModelSerializer):
    members = serializers.SerializerMethodField(
        help_text="`groups` with each person named, as the page shows them: e-mail, name and "
        "research interests."
    )
    timezone = serializers.CharField(source="course.timezone", read_only=True)
    created_at_text = serializers.SerializerMethodField(
        help_text="`created_at` as the page writes it, in course time with the zone named."
    )

    class Meta:
        model = GroupSuggestion
        fields = (
            "id",
            "seed",
            "status",
            "progress",
            "note",
            "groups",
            "stats",
            "created_at",
            "accepted_at",
            "members",
            "timezone",
            "created_at_text",
        )

    @extend_schema_field(
        serializers.ListField(
            child=serializers.ListField(child=SuggestedMemberSerializer()),
            help_text="One list per group.",
        )
    )
    def get_members(self, s: GroupSuggestion) -> list[list[dict[str, Any]]]:
        from apps.core.models import User

        ids = [u for g in s.groups for u in g]
        users = {u.pk: u for u in User.objects.filter(pk__in=ids)}
        _, interests = services.suggestion_inputs(s.course, ids)
        return [
            [
                {
                    "id": u,
                    "email": users[u].email,
                    "name": users[u].get_full_name() or users[u].email,
                    "interests": sorted(interests.get(u, [])),
                }
                for u in g
                if u in users
            ]
            for g in s.groups
        ]

    def get_created_at_text(self, s: GroupSuggestion) -> str:
        from apps.core.timefmt import format_instant

        return format_instant(s.created_at, s.course.timezone)


class SuggestInSerializer(serializers.Serializer):
    seed = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)


class SuggestionsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="The latest suggested groups (staff)",
        responses={200: GroupSuggestionSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        s = services.suggestion_get(course)
        if s is None:
            raise NotFound("No suggestion yet; POST to make one.")
        return Response(GroupSuggestionSerializer(s).data)

    @extend_schema(
        tags=TAGS,
        summary="Suggest groups of the allowed size from wishes and interests (staff; changes "
        "nothing). 201 with the groups for a small pool; 202 with status `queued` for a large "
        "one, computed by a worker: GET this URL for its progress and, when `done`, its groups",
        request=SuggestInSerializer,
        responses={201: GroupSuggestionSerializer, 202: GroupSuggestionSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        s = SuggestInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        made = services.suggestion_make(actor=user, course=course, **s.validated_data)
        return Response(
            GroupSuggestionSerializer(made).data,
            status=202 if made.status in GroupSuggestion.IN_PROGRESS else 201,
        )


class AcceptView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Create the suggested groups, all or nothing (staff). 200 once they exist; 202 "
        "with status `accepting` for a large suggestion, which a worker creates: GET the "
        "suggestion until `accepted_at` is set (or `note` says why nothing was made)",
        request=None,
        responses={200: GroupSuggestionSerializer, 202: GroupSuggestionSerializer, **E},
    )
    def post(self, request: Request, code: str, suggestion_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        made = services.suggestion_accept(actor=user, course=course, suggestion_id=suggestion_id)
        return Response(
            GroupSuggestionSerializer(services.suggestion_get(course, suggestion_id)).data,
            status=202 if made is None else 200,
        )
