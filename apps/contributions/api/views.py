"""Contributions API: propose (students), check a key without saving (anyone in the course),
edit while waiting (authors), review (staff), credits per student (staff)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.contributions import rules, selectors, services
from apps.contributions.models import KINDS, QuestionProposal
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.integrity import DeclarationSerializerMixin
from apps.core.models import User

E = error_responses(e409="Already reviewed, or no longer editable.")
TAGS = ["contributions"]


class ProposalOptionSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=4)  # type: ignore[assignment]
    text = serializers.CharField(max_length=500)
    correct = serializers.BooleanField(default=False)
    misconception = serializers.CharField(
        max_length=300, required=False, allow_blank=True, default=""
    )


class ProposalInSerializer(DeclarationSerializerMixin):
    kind = serializers.ChoiceField(choices=KINDS)
    prompt = serializers.CharField(max_length=5000)
    params_text = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="One a line: n = 8, gb in 2..20 step 2, n in {8, 16}.",
    )
    answer = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=500,
        help_text="Numeric: the key as a calculator expression.",
    )
    unit = serializers.CharField(required=False, allow_blank=True, default="", max_length=20)
    rel_tol = serializers.FloatField(
        required=False, default=0.02, help_text="Relative tolerance, 0.02 = 2 %."
    )
    options = ProposalOptionSerializer(many=True, required=False, default=list)
    assignment = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="Reframing: the assignment's id."
    )
    link = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=500,
        help_text="Reframing: https:// link to the starter code or notebook (never fetched).",
    )
    as_group = serializers.BooleanField(
        required=False, default=False, help_text="Credit every member of your group."
    )


class ProposalSerializer(serializers.ModelSerializer):
    authors = serializers.SerializerMethodField()
    question = serializers.SerializerMethodField()
    # What staff's review page writes beside each (#68: the API says what the page says)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    kind_label = serializers.CharField(source="get_kind_display", read_only=True)
    timezone = serializers.SerializerMethodField(help_text="The course's zone.")
    created_at_text = serializers.SerializerMethodField(
        help_text="`created_at` as the page writes it, in course time with the zone named."
    )

    class Meta:
        model = QuestionProposal
        fields = (
            "id",
            "kind",
            "prompt",
            "params_text",
            "answer",
            "unit",
            "rel_tol",
            "options",
            "assignment",
            "link",
            "status",
            "staff_comment",
            "authors",
            "question",
            "created_at",
            "reviewed_at",
            "ai_used",
            "ai_description",
            "status_label",
            "kind_label",
            "timezone",
            "created_at_text",
        )

    def get_timezone(self, obj: QuestionProposal) -> str:
        return str(self.context.get("zone") or obj.course.timezone)

    def get_created_at_text(self, obj: QuestionProposal) -> str:
        from apps.core.timefmt import format_instant

        return format_instant(obj.created_at, self.get_timezone(obj))

    def get_authors(self, obj: QuestionProposal) -> list[str]:
        return [u.get_full_name() or u.email for u in obj.authors.all()]

    def get_question(self, obj: QuestionProposal) -> str | None:
        return f"{obj.question.question_set.key}/{obj.question.key}" if obj.question else None


class CheckResultSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    problems = serializers.DictField(child=serializers.CharField())
    samples = serializers.ListField(
        child=serializers.DictField(), help_text="Five students' parameters and keys."
    )


def _data(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "as_group"}


class ProposalsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Proposals (students: theirs and the accepted ones; staff: all)",
        parameters=[
            OpenApiParameter(
                "status", str, required=False, enum=["proposed", "changes", "accepted", "rejected"]
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(ProposalSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = (
            selectors.proposal_list(user=user, course=course)
            .prefetch_related("authors")
            .order_by("-created_at", "-pk")
        )
        if request.query_params.get("status"):
            qs = qs.filter(status=request.query_params["status"])
        return page_response(
            request,
            qs,
            lambda page: (
                ProposalSerializer(page, many=True, context={"zone": course.timezone}).data
            ),
        )

    @extend_schema(
        tags=TAGS,
        summary="Propose a question (students; refused with every problem, the key checked)",
        request=ProposalInSerializer,
        responses={201: ProposalSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        s = ProposalInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            p = services.proposal_submit(
                actor=user,
                course=course,
                data=_data(s.validated_data),
                as_group=s.validated_data["as_group"],
            )
        except services.ProposalProblems as exc:
            raise serializers.ValidationError(exc.problems) from None
        return Response(ProposalSerializer(p).data, status=201)


class CheckView(APIView):
    @extend_schema(
        tags=TAGS,
        summary=(
            "Check a proposal without saving it: problems, or the key on five students' numbers"
        ),
        request=ProposalInSerializer,
        responses={200: CheckResultSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        api_course(request, code)
        s = ProposalInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        _, samples, problems = rules.check(
            kind=d["kind"],
            prompt=d["prompt"],
            params_text=d["params_text"],
            answer=d["answer"],
            rel_tol=d["rel_tol"],
            options=d["options"],
            link=d["link"],
        )
        return Response({"ok": not problems, "problems": problems, "samples": samples})


class ProposalView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Edit your proposal while it waits (authors)",
        request=ProposalInSerializer,
        responses={200: ProposalSerializer, **E},
    )
    def put(self, request: Request, code: str, proposal_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        services.proposal_of_author(actor=user, course=course, proposal_id=proposal_id)
        s = ProposalInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            p = services.proposal_update(
                actor=user, course=course, proposal_id=proposal_id, data=_data(s.validated_data)
            )
        except services.ProposalProblems as exc:
            raise serializers.ValidationError(exc.problems) from None
        return Response(ProposalSerializer(p).data)


class ReviewInSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "changes", "reject"])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class ReviewView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Accept (joins the contributed set), ask for changes or reject (staff)",
        request=ReviewInSerializer,
        responses={200: ProposalSerializer, **E},
    )
    def post(self, request: Request, code: str, proposal_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        s = ReviewInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        p = services.proposal_review(
            actor=user, course=course, proposal_id=proposal_id, **s.validated_data
        )
        return Response(ProposalSerializer(p).data)


class CreditSerializer(serializers.Serializer):
    student = serializers.EmailField()
    name = serializers.CharField()
    accepted = serializers.IntegerField()


class CreditsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Accepted questions per student (staff; for the enhancements component)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(CreditSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        credits = selectors.accepted_per_student(course)
        people = User.objects.filter(pk__in=list(credits)).order_by("full_name", "email")
        return page_response(
            request,
            people,
            lambda page: [
                {"student": u.email, "name": u.full_name, "accepted": credits[u.pk]} for u in page
            ],
        )
