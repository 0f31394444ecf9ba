"""Peer-review API: rounds, the pairing (staff preview and publish), assignments, drafts, and
reviews (your group's writing; reviews of your group only after the due date)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import integrity
from apps.core.api.fields import CourseDateTimeField, CourseZoneField
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import DomainError, NotFound
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant, to_course_tz
from apps.milestones.models import GroupMilestone
from apps.peerreview import pairing, services
from apps.peerreview.models import CRITERIA, RECOMMENDATIONS, PeerAssignment, PeerReview, PeerRound

E = error_responses(
    e409="A stale save (someone saved after you opened it), a published round, or the due date "
    "passed."
)
TAGS = ["peer-review"]


class PeerRoundSerializer(serializers.ModelSerializer):
    class Meta:
        model = PeerRound
        fields = (
            "id",
            "title",
            "milestone",
            "due_at",
            "k",
            "show_reviewers",
            "seed",
            "published_at",
        )


class PeerRoundCreateSerializer(serializers.Serializer):
    milestone = serializers.IntegerField(help_text="The report milestone's id.")
    due_at = CourseDateTimeField(help_text="Reviews due (and released) at this instant.")
    k = serializers.IntegerField(min_value=1, max_value=5, default=1)
    show_reviewers = serializers.BooleanField(default=False)
    title = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)


class RoundsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Rounds (students: published ones)",
        responses={200: PeerRoundSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = PeerRound.objects.filter(course=course)
        if not is_staff(user, course):
            qs = qs.filter(published_at__isnull=False)
        return Response(PeerRoundSerializer(qs, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Create a round (staff)",
        request=PeerRoundCreateSerializer,
        responses={201: PeerRoundSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        data = PeerRoundCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        r = services.round_create(
            actor=user,
            course=course,
            milestone_id=v["milestone"],
            due_at=v["due_at"],
            k=v["k"],
            show_reviewers=v["show_reviewers"],
            title=v["title"],
        )
        return Response(PeerRoundSerializer(r).data, status=201)


class PairingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    seed = serializers.IntegerField()
    pairs = serializers.ListField(
        child=serializers.DictField(), help_text="[{reviewer, reviewee}] group ids"
    )
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Why no pairing exists."
    )
    shared_window_pairs = serializers.IntegerField(
        help_text="Pairs that shared a sharing window (only if unavoidable)."
    )
    published = serializers.BooleanField()


class PairingRequestSerializer(serializers.Serializer):
    seed = serializers.IntegerField(
        required=False, allow_null=True, help_text="A new seed re-rolls; empty keeps the round's."
    )
    publish = serializers.BooleanField(
        default=False, help_text="Publish this pairing (groups are e-mailed)."
    )
    without_drafts = serializers.BooleanField(
        default=False,
        help_text="Publish even though some reviewed groups have no draft recorded (otherwise "
        "409 drafts_missing names them).",
    )


def _pairing(r: PeerRound, result: pairing.Pairing) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "seed": r.seed,
        "pairs": [{"reviewer": a, "reviewee": b} for a, b in result.pairs],
        "reasons": result.reasons,
        "shared_window_pairs": result.soft_violations,
        "published": bool(r.published_at),
    }


class PairingView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Preview a pairing for a seed (staff; changes nothing)",
        parameters=[OpenApiParameter("seed", int, required=False)],
        responses={200: PairingSerializer, **E},
    )
    def get(self, request: Request, code: str, round_id: int) -> Response:
        _, course = api_course(request, code, staff=True)
        r = services.round_get(course, round_id)
        seed = request.query_params.get("seed", "")
        if seed and not seed.lstrip("-").isdigit():
            raise DomainError("seed must be a whole number.", field="seed")
        if r.published_at:
            pairs = list(
                PeerAssignment.objects.filter(round=r).values_list("reviewer_id", "reviewee_id")
            )
            return Response(_pairing(r, pairing.Pairing(True, sorted(pairs), [])))
        return Response(
            _pairing(r, pairing.pair(services.problem_for(r, seed=int(seed) if seed else None)))
        )

    @extend_schema(
        tags=TAGS,
        summary="Keep a pairing as the proposal, and publish it if asked (staff)",
        request=PairingRequestSerializer,
        responses={200: PairingSerializer, **E},
    )
    def post(self, request: Request, code: str, round_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = PairingRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = services.preview(actor=user, course=course, round_id=round_id, seed=v.get("seed"))
        if v["publish"] and result.ok:
            services.publish(
                actor=user, course=course, round_id=round_id, without_drafts=v["without_drafts"]
            )
        return Response(_pairing(services.round_get(course, round_id), result))


def _review(a: PeerAssignment) -> PeerReview | None:
    try:
        return a.review
    except PeerReview.DoesNotExist:
        return None


class PeerAssignmentSerializer(serializers.ModelSerializer):
    """A pair as staff's completion board shows it: its review's status and when it was last
    saved, in course time (the course in the context)."""

    reviewer_name = serializers.CharField(source="reviewer.name", read_only=True)
    reviewee_name = serializers.CharField(source="reviewee.name", read_only=True)
    status = serializers.SerializerMethodField(help_text="draft, submitted, or '' (not started).")
    status_label = serializers.SerializerMethodField(help_text="The status in the page's words.")
    late = serializers.SerializerMethodField(help_text="Past the round's due time, not submitted.")
    timezone = CourseZoneField()
    saved_at = serializers.SerializerMethodField(
        help_text="When the review was last saved: ISO 8601 in the course's zone (null: never)."
    )
    saved_text = serializers.SerializerMethodField(help_text="`saved_at` as the page writes it.")

    class Meta:
        model = PeerAssignment
        fields = (
            "id",
            "round",
            "reviewer",
            "reviewer_name",
            "reviewee",
            "reviewee_name",
            "status",
            "status_label",
            "late",
            "timezone",
            "saved_at",
            "saved_text",
        )

    def get_status(self, a: PeerAssignment) -> str:
        rv = _review(a)
        return rv.status if rv else ""

    def get_status_label(self, a: PeerAssignment) -> str:
        rv = _review(a)
        return rv.get_status_display() if rv else "not started"

    def get_late(self, a: PeerAssignment) -> bool:
        rv = _review(a)
        submitted = rv is not None and rv.status == PeerReview.Status.SUBMITTED
        return timezone.now() > a.round.due_at and not submitted

    def get_saved_at(self, a: PeerAssignment) -> str | None:
        rv = _review(a)
        zone = self.context["course"].timezone
        return to_course_tz(rv.updated_at, zone).isoformat() if rv else None

    def get_saved_text(self, a: PeerAssignment) -> str | None:
        rv = _review(a)
        return format_instant(rv.updated_at, self.context["course"].timezone) if rv else None


class AssignmentsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Who reviews whom (staff: all; a group: whom it reviews)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(PeerAssignmentSerializer), **E},
    )
    def get(self, request: Request, code: str, round_id: int) -> Response:
        user, course = api_course(request, code)
        r = services.round_get(course, round_id)
        qs = (
            PeerAssignment.objects.filter(round=r)
            .select_related("reviewer", "reviewee", "round", "review")
            .order_by("reviewer__name", "pk")
        )
        if not is_staff(user, course):
            group = services.group_of(course, user)
            qs = qs.filter(reviewer=group) if group and r.published_at else qs.none()
        return page_response(
            request,
            qs,
            lambda page: PeerAssignmentSerializer(page, many=True, context={"course": course}).data,
        )


class DraftSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    group = serializers.IntegerField()
    group_name = serializers.CharField()
    link = serializers.CharField(allow_blank=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    late = serializers.BooleanField()


class DraftsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Drafts you may read: your group's and, once published, those your group reviews "
        "(staff: every group's)",
        parameters=[
            OpenApiParameter(
                "round", int, required=False, description="Default: the latest round."
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(DraftSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        rid = request.query_params.get("round", "")
        rounds = (
            PeerRound.objects.filter(course=course)
            .select_related("milestone")
            .order_by("-due_at", "-pk")
        )
        if not is_staff(user, course):
            rounds = rounds.filter(published_at__isnull=False)
        r = services.round_get(course, int(rid)) if rid.isdigit() else rounds.first()
        if r is None:
            return page_response(request, GroupMilestone.objects.none(), lambda page: [])
        qs = (
            GroupMilestone.objects.filter(milestone=r.milestone, group__course=course)
            .select_related("group")
            .order_by("group__name", "pk")
        )
        if not is_staff(user, course):
            group = services.group_of(course, user)
            if group is None:
                qs = qs.none()
            else:
                targets = PeerAssignment.objects.filter(
                    round=r, reviewer=group, round__published_at__isnull=False
                ).values("reviewee_id")
                qs = qs.filter(Q(group=group) | Q(group_id__in=targets))
        due = r.milestone.due_at
        return page_response(
            request,
            qs,
            lambda page: [
                {
                    "round": r.pk,
                    "group": d.group_id,
                    "group_name": d.group.name,
                    "link": d.link,
                    "submitted_at": d.submitted_at,
                    "late": bool(d.submitted_at and d.submitted_at > due),
                }
                for d in page
            ],
        )


class PeerReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.SerializerMethodField()
    reviewee = serializers.IntegerField(source="assignment.reviewee_id", read_only=True)
    round = serializers.IntegerField(source="assignment.round_id", read_only=True)

    class Meta:
        model = PeerReview
        fields = (
            "id",
            "assignment",
            "round",
            "reviewer",
            "reviewee",
            *[k for k, _ in CRITERIA],
            "strengths",
            "weaknesses",
            "suggestions",
            "recommendation",
            "status",
            "version",
            "updated_at",
            "submitted_at",
            "ai_used",
            "ai_description",
        )

    def get_reviewer(self, obj: PeerReview) -> int | None:
        """The reviewing group, unless the round hides reviewers from the reviewed group."""
        hide = self.context.get("hide_reviewer")
        return None if hide and hide(obj) else obj.assignment.reviewer_id


class ReviewsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Reviews: your group's writing, and reviews of your group once the due date has "
        "passed (staff: all)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(PeerReviewSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = (
            PeerReview.objects.filter(assignment__round__course=course)
            .select_related("assignment__round")
            .order_by("pk")
        )
        hide = None
        if not is_staff(user, course):
            group = services.group_of(course, user)
            if group is None:
                qs = qs.none()
            else:
                now = timezone.now()
                qs = qs.filter(
                    Q(assignment__reviewer=group)
                    | Q(
                        assignment__reviewee=group,
                        status=PeerReview.Status.SUBMITTED,
                        assignment__round__due_at__lte=now,
                        assignment__round__published_at__isnull=False,
                    )
                )

                def hide(rv: PeerReview) -> bool:
                    return (
                        rv.assignment.reviewer_id != group.pk
                        and not rv.assignment.round.show_reviewers
                    )

        return page_response(
            request,
            qs,
            lambda page: (
                PeerReviewSerializer(page, many=True, context={"hide_reviewer": hide}).data
            ),
        )


class PeerReviewSaveSerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=0, help_text="The version you read; a stale one is refused (409)."
    )
    submit = serializers.BooleanField(
        default=False, help_text="Submit (every score and comment required)."
    )
    clarity = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    depth = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    correctness = serializers.IntegerField(
        min_value=1, max_value=5, required=False, allow_null=True
    )
    rigour = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    artifact = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    strengths = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    weaknesses = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    suggestions = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    recommendation = serializers.ChoiceField(
        choices=[v for v, _ in RECOMMENDATIONS], required=False
    )
    ai_used = serializers.BooleanField(
        required=False, allow_null=True, help_text=integrity.QUESTION + " (required to submit)"
    )
    ai_description = serializers.CharField(
        required=False, allow_blank=True, max_length=integrity.MAX_DESCRIPTION
    )


class ReviewSaveView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Save or submit your group's review of an assignment (until the due date)",
        request=PeerReviewSaveSerializer,
        responses={200: PeerReviewSerializer, **E},
    )
    def put(self, request: Request, code: str, pair_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        group = services.group_of(course, user)
        if (
            group is None
            or not PeerAssignment.objects.filter(
                pk=pair_id, reviewer=group, round__course=course, round__published_at__isnull=False
            ).exists()
        ):
            raise NotFound("No such review for your group.")
        data = PeerReviewSaveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        review = services.review_save(
            actor=user,
            course=course,
            assignment_id=pair_id,
            version=v.pop("version"),
            submit=v.pop("submit"),
            data=v,
        )
        return Response(PeerReviewSerializer(review).data)
