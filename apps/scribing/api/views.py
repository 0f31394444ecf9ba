"""Scribing API: eligible lectures, one's own preferences, staff solve and publish, duties (staff:
all, paged; students: their own), notes submission and review, swaps."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.fields import CourseTimeField, CourseTimeTextField, CourseZoneField
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import NotAllowed, NotFound
from apps.core.permissions import is_staff
from apps.scribing import services
from apps.scribing.models import ScribeDuty, ScribePreference, ScribeSwap

E = error_responses()
TAGS = ["scribing"]


class ScribeLectureSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    title = serializers.CharField()
    starts_at = serializers.DateTimeField()
    part = serializers.CharField(allow_blank=True)
    is_guest = serializers.BooleanField()
    needed = serializers.IntegerField(
        allow_null=True, help_text="Scribes staff set; null = balanced."
    )
    scribes = serializers.ListField(
        child=serializers.CharField(), help_text="Once published: who scribes it."
    )


class LecturesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Lectures that take scribes (with their scribes once published)",
        responses={200: ScribeLectureSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code)
        plan = services.plan_for(course)
        who: dict[int, list[str]] = {}
        if plan.published_at:
            for lid, name, email in ScribeDuty.objects.filter(course=course).values_list(
                "lecture_id", "student__full_name", "student__email"
            ):
                who.setdefault(lid, []).append(name or email)
        return Response(
            [
                {
                    "id": lec.pk,
                    "number": lec.number,
                    "title": lec.title,
                    "starts_at": lec.starts_at,
                    "part": lec.part,
                    "is_guest": lec.is_guest,
                    "needed": needed,
                    "scribes": who.get(lec.pk, []),
                }
                for lec, needed in services.eligible_lectures(course)
            ]
        )


class ScribePreferencesSerializer(serializers.Serializer):
    cannot = serializers.ListField(
        child=serializers.IntegerField(), help_text="Lecture ids you cannot take.", max_length=200
    )
    prefer = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Lecture ids you would like, best first.",
        max_length=50,
    )
    group_mode = serializers.ChoiceField(
        choices=["none", "spread", "together"],
        required=False,
        help_text="For your whole group: spread, together, or none.",
    )


class PreferencesView(APIView):
    @extend_schema(
        tags=TAGS, summary="Your preferences", responses={200: ScribePreferencesSerializer, **E}
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        rows = ScribePreference.objects.filter(course=course, student=user).order_by("rank")
        return Response(
            {
                "cannot": [p.lecture_id for p in rows if p.kind == "cannot"],
                "prefer": [p.lecture_id for p in rows if p.kind == "prefer"],
            }
        )

    @extend_schema(
        tags=TAGS,
        summary="Replace your preferences (until the deadline)",
        request=ScribePreferencesSerializer,
        responses={200: ScribePreferencesSerializer, **E},
    )
    def put(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        data = ScribePreferencesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        services.preferences_save(
            student=user,
            course=course,
            cannot=v["cannot"],
            prefer=v["prefer"],
            group_mode="" if v.get("group_mode") == "none" else v.get("group_mode"),
        )
        return self.get(request, code)


class SolveResultSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["none", "solving", "done", "failed"])
    ok = serializers.BooleanField()
    score = serializers.IntegerField(
        help_text="Weighted satisfied preferences (rank 1 of N is worth N)."
    )
    best_bound = serializers.FloatField()
    optimal = serializers.BooleanField(help_text="Proven optimal.")
    gap = serializers.FloatField(help_text="Relative distance from the bound (0 when optimal).")
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Why no assignment exists."
    )
    satisfied = serializers.DictField(
        child=serializers.IntegerField(), help_text="Rank → how many satisfied."
    )
    assignment = serializers.ListField(
        child=serializers.DictField(), help_text="[{student, lecture}]"
    )


def _stored(plan: Any) -> dict[str, Any]:
    gap = (
        0.0
        if plan.proposal_optimal or not plan.proposal_bound
        else max(0.0, (plan.proposal_bound - plan.proposal_score) / plan.proposal_bound)
    )
    return {
        "status": plan.solve_status or "none",
        "ok": plan.solve_status == "done",
        "score": plan.proposal_score,
        "best_bound": plan.proposal_bound,
        "optimal": plan.proposal_optimal,
        "gap": gap,
        "reasons": plan.proposal_reasons,
        "satisfied": plan.proposal_satisfied,
        "assignment": [{"student": s, "lecture": lid} for s, lid in plan.proposal],
    }


class SolveView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="The latest solve (staff): status none/solving/done/failed and its result",
        responses={200: SolveResultSerializer, **E},
    )
    def get(self, request: Request, code: str) -> Response:
        _, course = api_course(request, code, staff=True)
        return Response(_stored(services.plan_for(course)))

    @extend_schema(
        tags=TAGS,
        summary="Solve the assignment (staff); published duties stay fixed. Large courses: "
        "202 while a worker solves; poll GET",
        request=None,
        responses={200: SolveResultSerializer, 202: SolveResultSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        result = services.solve_requested(actor=user, course=course)
        return Response(_stored(services.plan_for(course)), status=202 if result is None else 200)


class PublishedSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Duties created by this publication.")


class PublishView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Publish the solved assignment (staff); students are e-mailed",
        request=None,
        responses={200: PublishedSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        return Response({"created": services.publish(actor=user, course=course)})


class ScribeDutySerializer(serializers.ModelSerializer):
    """A duty as the scribing page lists it; the `*_text` times need the course in the
    context."""

    lecture_number = serializers.IntegerField(source="lecture.number", read_only=True)
    student_email = serializers.CharField(source="student.email", read_only=True)
    lecture_title = serializers.CharField(source="lecture.title", read_only=True)
    lecture_starts_at = CourseTimeField(source="lecture.starts_at")
    lecture_starts_text = CourseTimeTextField(
        source="lecture.starts_at", help_text="The lecture's start, as the page writes it."
    )
    timezone = CourseZoneField()
    due_text = CourseTimeTextField(
        source="due_at", help_text="When the notes are due, in course time as the page says."
    )
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    late = serializers.SerializerMethodField(
        help_text="Still owed and past its due time (the page's '· late')."
    )

    class Meta:
        model = ScribeDuty
        fields = (
            "id",
            "lecture",
            "lecture_number",
            "student",
            "student_email",
            "due_at",
            "status",
            "link",
            "declaration",
            "submitted_at",
            "feedback",
            "reviewed_at",
            "lecture_title",
            "lecture_starts_at",
            "lecture_starts_text",
            "timezone",
            "due_text",
            "status_label",
            "late",
        )

    def get_late(self, duty: ScribeDuty) -> bool:
        return duty.late_at(timezone.now())


class DutiesView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Duties (staff: every duty, paged; students: their own)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(ScribeDutySerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = (
            ScribeDuty.objects.filter(course=course)
            .select_related("lecture", "student")
            .order_by("lecture__starts_at", "student_id")
        )
        if not is_staff(user, course):
            qs = qs.filter(student=user)
        return page_response(
            request,
            qs,
            lambda page: ScribeDutySerializer(page, many=True, context={"course": course}).data,
        )


class ScribeSubmitSerializer(serializers.Serializer):
    link = serializers.URLField(
        max_length=500, help_text="The notes: a pull request, Overleaf or Docs link."
    )
    declaration = serializers.CharField(
        max_length=4000, help_text="LLMs or other sources used (or “none”)."
    )


class SubmitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Submit the notes for your duty",
        request=ScribeSubmitSerializer,
        responses={200: ScribeDutySerializer, **E},
    )
    def post(self, request: Request, code: str, duty_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        if not ScribeDuty.objects.filter(course=course, pk=duty_id, student=user).exists():
            raise NotFound("No such duty of yours.")  # before validating: a stranger learns nothing
        data = ScribeSubmitSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        duty = services.duty_submit(
            student=user, course=course, duty_id=duty_id, **data.validated_data
        )
        return Response(ScribeDutySerializer(duty, context={"course": course}).data)


class ScribeReviewSerializer(serializers.Serializer):
    accept = serializers.BooleanField(help_text="true accepts; false asks for a revision.")
    feedback = serializers.CharField(max_length=4000, allow_blank=True, required=False, default="")


class ReviewView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Accept notes or ask for a revision (staff)",
        request=ScribeReviewSerializer,
        responses={200: ScribeDutySerializer, **E},
    )
    def post(self, request: Request, code: str, duty_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = ScribeReviewSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        duty = services.duty_review(
            actor=user, course=course, duty_id=duty_id, **data.validated_data
        )
        return Response(ScribeDutySerializer(duty, context={"course": course}).data)


class ScribeSwapSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScribeSwap
        fields = (
            "id",
            "duty",
            "proposer",
            "other",
            "other_duty",
            "status",
            "note",
            "created_at",
            "decided_at",
        )


class SwapProposeSerializer(serializers.Serializer):
    duty = serializers.IntegerField(help_text="Your duty's id.")
    other = serializers.EmailField(help_text="The classmate's e-mail.")
    other_duty = serializers.IntegerField(
        required=False, allow_null=True, help_text="Their duty's id; empty = give away."
    )
    note = serializers.CharField(max_length=300, required=False, default="", allow_blank=True)


class SwapsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Swaps (staff: all; students: those involving them)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(ScribeSwapSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = ScribeSwap.objects.filter(course=course)
        if not is_staff(user, course):
            qs = qs.filter(Q(proposer=user) | Q(other=user))
        return page_response(
            request,
            qs.order_by("-created_at", "-pk"),
            lambda page: ScribeSwapSerializer(page, many=True).data,
        )

    @extend_schema(
        tags=TAGS,
        summary="Propose a swap or give a duty away",
        request=SwapProposeSerializer,
        responses={201: ScribeSwapSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, student=True)
        data = SwapProposeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        swap = services.swap_propose(
            proposer=user,
            course=course,
            duty_id=v["duty"],
            other_email=v["other"],
            other_duty_id=v.get("other_duty"),
            note=v["note"],
        )
        return Response(ScribeSwapSerializer(swap).data, status=201)


class ScribeDecideSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=["accept", "decline", "cancel", "revert"],
        help_text="accept/decline (the other student), cancel (the proposer), revert (staff).",
    )


class SwapDecideView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Answer, cancel or (staff) revert a swap",
        request=ScribeDecideSerializer,
        responses={200: ScribeSwapSerializer, **E},
    )
    def post(self, request: Request, code: str, swap_id: int) -> Response:
        user, course = api_course(request, code)
        mine = ScribeSwap.objects.filter(course=course, pk=swap_id)
        if not is_staff(user, course):
            mine = mine.filter(Q(proposer=user) | Q(other=user))
        if not mine.exists():
            raise NotFound("No such swap for you.")
        data = ScribeDecideSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        action = data.validated_data["action"]
        if action == "revert":
            if not is_staff(user, course):
                raise NotAllowed("Only the course's instructors and TAs may revert a swap.")
            swap = services.swap_revert(actor=user, course=course, swap_id=swap_id)
        else:
            swap = services.swap_decide(
                actor=user, course=course, swap_id=swap_id, accept=action == "accept"
            )
        return Response(ScribeSwapSerializer(swap).data)
