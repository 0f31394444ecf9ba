"""Checkoff API: sign-up sets, their slots (staff create one or a day of them, previewed with
`preview: true`), booking and cancelling for your group, bookings (students: their group's;
staff: all) and outcomes (staff)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, F, Q
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.checkoffs import rules, selectors, services
from apps.checkoffs.models import HOLDS, HOLDS_FROM_SET, Booking, CheckoffSet, CheckoffSlot
from apps.core.api.fields import (
    CourseDateField,
    CourseDateTimeField,
    CourseTimeTextField,
    CourseZoneField,
)
from apps.core.api.helpers import (
    PAGE_PARAMETERS,
    api_course,
    error_responses,
    page_response,
    paginated,
)
from apps.core.errors import DomainError, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant, to_course_tz
from apps.groups.models import Group
from apps.groups.selectors import group_for_student

E = error_responses(
    e409="Full, past the cut-off (the message gives it in course time), already booked, or a clash."
)
TAGS = ["checkoffs"]


class CheckoffSetSerializer(serializers.ModelSerializer):
    class Meta:
        model = CheckoffSet
        fields: tuple[str, ...] = (
            "id",
            "kind",
            "title",
            "assignment",
            "event",
            "milestone",
            "book_by",
            "published_at",
        )


class CheckoffSetCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=CheckoffSet.Kind.choices, help_text="What groups sign up for."
    )
    title = serializers.CharField(
        max_length=120,
        required=False,
        default="",
        allow_blank=True,
        help_text="Empty: from the assignment or session.",
    )
    assignment = serializers.IntegerField(
        required=False, allow_null=True, help_text="Required for an assignment checkoff."
    )
    event = serializers.IntegerField(
        required=False, allow_null=True, help_text="A presentation session's id."
    )
    milestone = serializers.IntegerField(
        required=False, allow_null=True, help_text="The milestone discussed (check-in)."
    )
    book_by = CourseDateTimeField(
        required=False, allow_null=True, help_text="Groups should have booked by then."
    )
    publish = serializers.BooleanField(
        default=False, help_text="Publish at once (students see it)."
    )


class GroupBookingSerializer(serializers.Serializer):
    starts_at = serializers.DateTimeField(help_text="ISO 8601 in the course's zone.")
    starts_text = serializers.CharField(help_text="`starts_at` as the page writes it.")
    location = serializers.CharField()
    staff = serializers.CharField(allow_blank=True, help_text="Who holds the slot, by name.")
    attendance = serializers.CharField(allow_blank=True)
    attendance_label = serializers.CharField(allow_blank=True)
    outcome = serializers.CharField(allow_blank=True)
    outcome_label = serializers.CharField(allow_blank=True)
    notes = serializers.CharField(allow_blank=True)


class CheckoffSetRowSerializer(CheckoffSetSerializer):
    """A sign-up as the checkoff pages list it (the fields above, then the page's facts)."""

    kind_label = serializers.CharField(help_text="The kind in the page's words.")
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    book_by_text = serializers.CharField(
        allow_null=True, help_text="`book_by` in course time, as the page writes it."
    )
    slots = serializers.IntegerField(
        allow_null=True, help_text="Staff: its slots (students: null)."
    )
    booked = serializers.IntegerField(
        allow_null=True, help_text="Staff: groups holding a booking in it (students: null)."
    )
    passed = serializers.IntegerField(
        allow_null=True, help_text="Staff: bookings whose outcome is passed (students: null)."
    )
    groups = serializers.IntegerField(
        allow_null=True, help_text="Staff: the course's live groups, what `booked` is out of."
    )
    booking = GroupBookingSerializer(
        allow_null=True,
        help_text="Students: their group's booking that holds (null: not booked); staff: null.",
    )

    class Meta(CheckoffSetSerializer.Meta):
        fields = (
            *CheckoffSetSerializer.Meta.fields,
            "kind_label",
            "timezone",
            "book_by_text",
            "slots",
            "booked",
            "passed",
            "groups",
            "booking",
        )


def _booking(b: Booking | None, zone: str) -> dict[str, Any] | None:
    if b is None:
        return None
    staff = b.slot.staff
    return {
        "starts_at": to_course_tz(b.slot.starts_at, zone).isoformat(),
        "starts_text": format_instant(b.slot.starts_at, zone),
        "location": b.slot.location,
        "staff": staff.get_full_name() if staff else "",
        "attendance": b.attendance,
        "attendance_label": b.get_attendance_display() if b.attendance else "",
        "outcome": b.outcome,
        "outcome_label": b.get_outcome_display() if b.outcome else "",
        # The student page shows a TA's notes with the outcome, never before it is decided.
        "notes": b.notes if b.outcome else "",
    }


def set_rows(*, user: User, course: Course) -> list[dict[str, Any]]:
    """The sign-ups as the pages list them. Staff: with its slots, the groups booked (of the
    live groups) and passed, as the sign-ups page and the outcomes board count them. Students:
    with their group's booking. A fixed number of queries however many sets."""
    zone, staff = course.timezone, is_staff(user, course)
    sets = selectors.set_list(user=user, course=course)
    mine: dict[int, Booking] = {}
    live = None
    if staff:
        sets = sets.annotate(
            n_slots=Count("slots", distinct=True),
            n_booked=Count("bookings", filter=HOLDS_FROM_SET, distinct=True),
            n_passed=Count(
                "bookings",
                filter=Q(bookings__outcome="passed", bookings__cancelled_at__isnull=True),
                distinct=True,
            ),
        )
        live = (
            Group.objects.filter(
                course=course, dissolved_at__isnull=True, memberships__left_at__isnull=True
            )
            .distinct()
            .count()
        )
    else:
        group = group_for_student(course=course, user=user)
        if group is not None:
            mine = {
                b.set_id: b
                for b in Booking.objects.filter(
                    HOLDS, set__course=course, group=group
                ).select_related("slot", "slot__staff")
            }
    rows = []
    for s in sets:
        row = dict(CheckoffSetSerializer(s).data)
        row.update(
            kind_label=s.get_kind_display(),
            timezone=zone,
            book_by_text=format_instant(s.book_by, zone) if s.book_by else None,
            slots=s.n_slots if staff else None,  # type: ignore[attr-defined]
            booked=s.n_booked if staff else None,  # type: ignore[attr-defined]
            passed=s.n_passed if staff else None,  # type: ignore[attr-defined]
            groups=live,
            booking=None if staff else _booking(mine.get(s.pk), zone),
        )
        rows.append(row)
    return rows


class SetsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Sign-ups, as the checkoff pages list them (students: published ones)",
        description="Staff: each with its slots, groups booked of the live groups, and passed "
        "(the outcomes board's counts). Students: each with their group's booking (its time in "
        "course time, place, staff, attendance and outcome). Times are ISO 8601 in the course's "
        "zone, with a `*_text` as the page writes them.",
        responses={200: CheckoffSetRowSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        return Response(set_rows(user=user, course=course))

    @extend_schema(
        tags=TAGS,
        summary="Create a sign-up (staff)",
        request=CheckoffSetCreateSerializer,
        responses={201: CheckoffSetSerializer, **E},
    )
    def post(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code, staff=True)
        data = CheckoffSetCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        s = services.set_create(
            actor=user,
            course=course,
            kind=v["kind"],
            title=v["title"],
            assignment_id=v.get("assignment"),
            event_id=v.get("event"),
            milestone_id=v.get("milestone"),
            book_by=v.get("book_by"),
            publish=v["publish"],
        )
        return Response(CheckoffSetSerializer(s).data, status=201)


class SetPublishSerializer(serializers.Serializer):
    published = serializers.BooleanField(
        help_text="true: students see and book it; false: hidden again."
    )


class SetPublishView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Publish or hide a sign-up (staff)",
        request=SetPublishSerializer,
        responses={200: CheckoffSetSerializer, **E},
    )
    def post(self, request: Request, code: str, set_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = SetPublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        s = services.set_publish(
            actor=user, course=course, set_id=set_id, published=data.validated_data["published"]
        )
        return Response(CheckoffSetSerializer(s).data)


class CheckoffSlotSerializer(serializers.ModelSerializer):
    free = serializers.IntegerField(read_only=True, help_text="Places left, in groups.")
    staff_name = serializers.SerializerMethodField()
    cutoff_at = serializers.SerializerMethodField(
        help_text="Booking, moving and cancelling close at this instant."
    )
    open = serializers.SerializerMethodField(help_text="Before the cut-off.")

    class Meta:
        model = CheckoffSlot
        fields = (
            "id",
            "set",
            "starts_at",
            "ends_at",
            "location",
            "capacity",
            "booked",
            "free",
            "staff",
            "staff_name",
            "cutoff_at",
            "open",
        )

    def get_staff_name(self, obj: CheckoffSlot) -> str:
        return obj.staff.get_full_name() if obj.staff else ""

    def get_cutoff_at(self, obj: CheckoffSlot) -> dt.datetime:
        return rules.cutoff_at(obj.starts_at, self.context["hours"])

    def get_open(self, obj: CheckoffSlot) -> bool:
        return rules.is_open(obj.starts_at, self.context["hours"], self.context["now"])


class SlotPlanSerializer(serializers.Serializer):
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    location = serializers.CharField()
    capacity = serializers.IntegerField()
    staff = serializers.IntegerField(allow_null=True)
    clash = serializers.CharField(help_text="Why it cannot be created; empty when it can.")


class SlotsCreatedSerializer(serializers.Serializer):
    created = serializers.BooleanField(help_text="false for a preview")
    slots = SlotPlanSerializer(many=True)


class SlotsCreateSerializer(serializers.Serializer):
    day = CourseDateField(
        required=False, help_text="A day cut into slots (course time), with start, end, minutes."
    )
    start = serializers.TimeField(required=False, help_text="Start of the range, course time.")
    end = serializers.TimeField(required=False, help_text="End of the range, course time.")
    minutes = serializers.IntegerField(
        required=False, min_value=5, max_value=480, help_text="Length of each slot."
    )
    break_start = serializers.TimeField(
        required=False, allow_null=True, help_text="No slot overlaps [break_start, break_end)."
    )
    break_end = serializers.TimeField(required=False, allow_null=True)
    starts_at = CourseDateTimeField(required=False, help_text="Or one slot: its start and end.")
    ends_at = CourseDateTimeField(required=False)
    location = serializers.CharField(max_length=120, help_text="Room or video-call link.")
    capacity = serializers.IntegerField(
        min_value=1, max_value=50, default=1, help_text="Groups per slot."
    )
    staff = serializers.IntegerField(
        required=False, allow_null=True, help_text="The staff member's user id."
    )
    preview = serializers.BooleanField(
        default=False, help_text="true: show the slots and clashes, create nothing."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        one = "starts_at" in attrs or "ends_at" in attrs
        day = any(k in attrs for k in ("day", "start", "end", "minutes"))
        if one == day:
            raise serializers.ValidationError(
                "Give either day, start, end and minutes (a day of slots) or starts_at and ends_at "
                "(one slot)."
            )
        need = ("starts_at", "ends_at") if one else ("day", "start", "end", "minutes")
        missing = [k for k in need if attrs.get(k) is None]
        if missing:
            raise serializers.ValidationError({k: ["This field is required."] for k in missing})
        return attrs


def _slot_context(course: Course) -> dict[str, Any]:
    return {"hours": course.checkoff_cutoff_hours, "now": timezone.now()}


def _day_start(text: str, course: Course, field: str) -> dt.datetime | None:
    if not text:
        return None
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise DomainError(f"{field} is a date, e.g. 2026-04-28.", field=field) from None
    if not rules.plausible(day):
        raise DomainError(
            f"{field} is a date between {rules.FIRST_YEAR} and {rules.LAST_YEAR}.", field=field
        )
    return dt.datetime.combine(day, dt.time(0), tzinfo=course.tz)


class SlotsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="A sign-up's slots with free places, by start (students: published sign-ups)",
        parameters=[
            OpenApiParameter(
                "from", str, required=False, description="First day (course time), YYYY-MM-DD."
            ),
            OpenApiParameter(
                "to", str, required=False, description="Day after the last, YYYY-MM-DD."
            ),
            OpenApiParameter(
                "free",
                bool,
                required=False,
                description="Only slots with a free place, still open.",
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(CheckoffSlotSerializer), **E},
    )
    def get(self, request: Request, code: str, set_id: int) -> Response:
        user, course = api_course(request, code)
        s = selectors.set_list(user=user, course=course).filter(pk=set_id).first()
        if s is None:
            raise NotFound("No such sign-up.")
        qs = (
            selectors.slot_list(user=user, course=course)
            .filter(set=s)
            .order_by("starts_at", "location", "pk")
        )
        lo = _day_start(request.query_params.get("from", ""), course, "from")
        hi = _day_start(request.query_params.get("to", ""), course, "to")
        if lo:
            qs = qs.filter(starts_at__gte=lo)
        if hi:
            qs = qs.filter(starts_at__lt=hi)
        ctx = _slot_context(course)
        if request.query_params.get("free") in ("1", "true"):
            qs = qs.filter(
                booked__lt=F("capacity"),
                starts_at__gt=ctx["now"] + dt.timedelta(hours=ctx["hours"]),
            )
        return page_response(
            request, qs, lambda page: CheckoffSlotSerializer(page, many=True, context=ctx).data
        )

    @extend_schema(
        tags=TAGS,
        summary="Create one slot or a day of slots (staff; preview first with preview=true)",
        request=SlotsCreateSerializer,
        responses={200: SlotsCreatedSerializer, 201: SlotsCreatedSerializer, **E},
    )
    def post(self, request: Request, code: str, set_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        services.set_get(course, set_id)
        data = SlotsCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        if "starts_at" in v:
            plans = services.single_plan(
                course=course,
                starts_at=v["starts_at"],
                ends_at=v["ends_at"],
                location=v["location"],
                capacity=v["capacity"],
                staff_id=v.get("staff"),
            )
        else:
            plans = services.slots_plan(
                course=course,
                day=v["day"],
                start=v["start"],
                end=v["end"],
                minutes=v["minutes"],
                location=v["location"],
                capacity=v["capacity"],
                staff_id=v.get("staff"),
                break_start=v.get("break_start"),
                break_end=v.get("break_end"),
            )
        body = [
            {
                "starts_at": p.starts_at,
                "ends_at": p.ends_at,
                "location": p.location,
                "capacity": p.capacity,
                "staff": p.staff.pk if p.staff else None,
                "clash": p.clash,
            }
            for p in plans
        ]
        if v["preview"]:
            return Response(SlotsCreatedSerializer({"created": False, "slots": body}).data)
        services.slots_create(actor=user, course=course, set_id=set_id, plans=plans)
        return Response(SlotsCreatedSerializer({"created": True, "slots": body}).data, status=201)


class SlotDeletedSerializer(serializers.Serializer):
    deleted = serializers.BooleanField()
    groups_emailed = serializers.IntegerField(
        help_text="Groups that lost their booking and were e-mailed."
    )


class SlotView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Delete a slot (staff; a booked one needs ?confirm=true, its groups are e-mailed)",
        parameters=[OpenApiParameter("confirm", bool, required=False)],
        responses={200: SlotDeletedSerializer, **E},
    )
    def delete(self, request: Request, code: str, slot_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        n = services.slot_delete(
            actor=user,
            course=course,
            slot_id=slot_id,
            confirm=request.query_params.get("confirm") in ("1", "true"),
        )
        return Response({"deleted": True, "groups_emailed": n})


class BookingSerializer(serializers.ModelSerializer):
    group_name = serializers.CharField(source="group.name", read_only=True)
    set_title = serializers.CharField(source="set.title", read_only=True)
    starts_at = serializers.DateTimeField(source="slot.starts_at", read_only=True)
    ends_at = serializers.DateTimeField(source="slot.ends_at", read_only=True)
    location = serializers.CharField(source="slot.location", read_only=True)
    holds = serializers.BooleanField(
        read_only=True, help_text="Holds the group's place in the set (not cancelled, not a redo)."
    )
    # what the day's schedule writes beside each booking (#68): the start in course time with
    # the zone named, the slot's staff member, and the recorded state in the page's words
    starts_text = CourseTimeTextField(source="slot.starts_at")
    timezone = CourseZoneField()
    staff = serializers.SerializerMethodField(help_text="The slot's staff member; null: nobody.")
    attendance_label = serializers.CharField(source="get_attendance_display", read_only=True)
    outcome_label = serializers.CharField(source="get_outcome_display", read_only=True)
    notes = serializers.SerializerMethodField(
        help_text="The staff member's notes; a student sees them with the outcome, as on the "
        "page, never before it is decided."
    )

    class Meta:
        model = Booking
        fields = (
            "id",
            "set",
            "set_title",
            "slot",
            "starts_at",
            "starts_text",
            "timezone",
            "ends_at",
            "location",
            "staff",
            "group",
            "group_name",
            "created_at",
            "cancelled_at",
            "holds",
            "attendance",
            "attendance_label",
            "outcome",
            "outcome_label",
            "notes",
            "recorded_at",
        )

    def get_staff(self, b: Booking) -> str | None:
        return b.slot.staff.get_full_name() if b.slot.staff else None

    def get_notes(self, b: Booking) -> str:
        return b.notes if b.outcome or self.context.get("staff") else ""


class BookSerializer(serializers.Serializer):
    move = serializers.BooleanField(
        default=False, help_text="Give up the group's place in the same sign-up to take this one."
    )


class BookView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Book the slot for your whole group (or move to it)",
        request=BookSerializer,
        responses={201: BookingSerializer, **E},
    )
    def post(self, request: Request, code: str, slot_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        data = BookSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        b = services.book(
            actor=user, course=course, slot_id=slot_id, move=data.validated_data["move"]
        )
        return Response(BookingSerializer(b, context={"course": course}).data, status=201)


class CancelView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Cancel your group's booking of the slot (until the cut-off)",
        request=None,
        responses={200: BookingSerializer, **E},
    )
    def post(self, request: Request, code: str, slot_id: int) -> Response:
        user, course = api_course(request, code, student=True)
        return Response(
            BookingSerializer(
                services.cancel(actor=user, course=course, slot_id=slot_id),
                context={"course": course},
            ).data
        )


class BookingsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Bookings (students: their group's, outcomes and notes included; staff: all)",
        parameters=[
            OpenApiParameter("set", int, required=False),
            OpenApiParameter("group", int, required=False, description="Staff."),
            OpenApiParameter(
                "date",
                str,
                required=False,
                description="Slots on this day (course time), YYYY-MM-DD.",
            ),
            OpenApiParameter("outcome", str, required=False, enum=["passed", "redo", "none"]),
            OpenApiParameter(
                "cancelled", bool, required=False, description="Include cancelled ones."
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(BookingSerializer), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        qs = selectors.booking_list(user=user, course=course).order_by("slot__starts_at", "pk")
        p = request.query_params
        if p.get("cancelled") not in ("1", "true"):
            qs = qs.filter(cancelled_at__isnull=True)
        for key, field in (("set", "set_id"), ("group", "group_id")):
            if p.get(key):
                if not p[key].isdigit():
                    raise DomainError(f"{key} is an id.", field=key)
                qs = qs.filter(**{field: int(p[key])})
        day = _day_start(p.get("date", ""), course, "date")
        if day:
            qs = qs.filter(slot__starts_at__gte=day, slot__starts_at__lt=day + dt.timedelta(days=1))
        if p.get("outcome"):
            if p["outcome"] not in ("passed", "redo", "none"):
                raise DomainError("outcome is passed, redo or none.", field="outcome")
            qs = qs.filter(outcome="" if p["outcome"] == "none" else p["outcome"])
        return page_response(
            request,
            qs,
            lambda page: (
                BookingSerializer(
                    page, many=True, context={"course": course, "staff": is_staff(user, course)}
                ).data
            ),
        )


class OutcomeSerializer(serializers.Serializer):
    attendance = serializers.ChoiceField(
        choices=Booking.Attendance.choices, help_text="present, no-show, or empty."
    )
    outcome = serializers.ChoiceField(
        choices=Booking.Outcome.choices,
        required=False,
        default="",
        help_text="passed (needs present), redo (the group may book again), or empty.",
    )
    notes = serializers.CharField(
        max_length=5000,
        required=False,
        default="",
        allow_blank=True,
        help_text="Shown to the group.",
    )


class OutcomeView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Record attendance and the outcome (staff)",
        request=OutcomeSerializer,
        responses={200: BookingSerializer, **E},
    )
    def post(self, request: Request, code: str, booking_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        data = OutcomeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        b = services.record(
            actor=user,
            course=course,
            booking_id=booking_id,
            attendance=v["attendance"],
            outcome=v["outcome"],
            notes=v["notes"],
        )
        return Response(BookingSerializer(b, context={"course": course, "staff": True}).data)


class UnbookedGroupSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class RemindedSerializer(serializers.Serializer):
    groups = serializers.IntegerField(help_text="Groups e-mailed.")


class UnbookedView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Groups holding no place in the sign-up (staff)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(UnbookedGroupSerializer), **E},
    )
    def get(self, request: Request, code: str, set_id: int) -> Response:
        _, course = api_course(request, code, staff=True)
        s = services.set_get(course, set_id)
        return page_response(
            request,
            selectors.unbooked_groups(s),
            lambda page: [{"id": g.pk, "name": g.name} for g in page],
        )

    @extend_schema(
        tags=TAGS,
        summary="E-mail every group holding no place to book (staff; once per 10 minutes)",
        request=None,
        responses={202: RemindedSerializer, **E},
    )
    def post(self, request: Request, code: str, set_id: int) -> Response:
        user, course = api_course(request, code, staff=True)
        return Response(
            {"groups": services.remind(actor=user, course=course, set_id=set_id)}, status=202
        )
