from __future__ import annotations

import copy
from typing import Any

from django.contrib.auth import authenticate
from rest_framework import serializers

from apps.core.models import ApiToken, Course, GradingComponent, Membership, User


# A ModelSerializer that works out its fields from the model once per class, not on every
# instance: for a hot response (a slack spend's entries, a student's ledger) DRF's field building
# from the model's metadata cost about as much as writing the rows out. For a serializer whose
# fields depend only on its class (no `get_fields` that reads the context). A comment, not a
# docstring: the API schema would show a docstring as every subclass's description.
class FieldsOnceModelSerializer(serializers.ModelSerializer):
    _fields_once: dict[str, Any]

    def get_fields(self) -> dict[str, Any]:
        built = type(self).__dict__.get("_fields_once")
        if built is None:
            built = super().get_fields()
            type(self)._fields_once = built
        return copy.deepcopy(built)  # unbound copies, as `Serializer.get_fields` hands out


class TokenRequestSerializer(serializers.Serializer):
    email = serializers.EmailField(help_text="The email you log in with.")
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)
    client = serializers.CharField(
        required=False,
        max_length=100,
        help_text="A name for this client's token ('grading laptop'); default: its User-Agent.",
    )

    def validate(self, attrs: dict) -> dict:
        request = self.context.get("request")
        # django-axes flags the Django request it is given; its middleware reads that flag.
        django_request = getattr(request, "_request", request)
        user = authenticate(django_request, username=attrs["email"], password=attrs["password"])
        if user is None:
            raise serializers.ValidationError(
                "Email or password is wrong, or the account is inactive.", code="authorization"
            )
        attrs["user"] = user
        return attrs


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`. Shown once.")
    id = serializers.IntegerField(help_text="The token's id, to revoke it alone.")
    name = serializers.CharField()


class ApiTokenSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ("id", "name", "prefix", "created_at", "last_used_at", "revoked_at")


class MembershipSerializer(serializers.ModelSerializer):
    course = serializers.CharField(source="course.code", help_text="Course code.")
    course_title = serializers.CharField(source="course.title")
    term = serializers.CharField(source="course.term")

    class Meta:
        model = Membership
        fields = ("course", "course_title", "term", "role")


class MeSerializer(serializers.ModelSerializer):
    memberships = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = ("id", "email", "full_name", "sid", "is_demo", "memberships")

    def get_memberships(self, obj: User) -> list[dict]:
        qs = obj.memberships.filter(is_active=True).select_related("course")
        return MembershipSerializer(qs, many=True).data  # type: ignore[return-value]

    get_memberships.__annotations__["return"] = MembershipSerializer(many=True)  # for the schema


class CourseListSerializer(serializers.ModelSerializer):
    role = serializers.CharField(
        read_only=True, allow_null=True, help_text="Your role in this course."
    )

    class Meta:
        model = Course
        fields = ("code", "number", "title", "term", "timezone", "role")


class GradingComponentSerializer(serializers.ModelSerializer):
    parent = serializers.SlugRelatedField[GradingComponent](
        slug_field="key", read_only=True, allow_null=True
    )  # type: ignore[assignment]

    class Meta:
        model = GradingComponent
        fields = ("id", "key", "name", "weight", "satisfactory_threshold", "parent")


class PolicySerializer(serializers.ModelSerializer):
    class Meta:
        model = Course
        fields = (
            "due_time",
            "release_time",
            "group_min_size",
            "group_max_size",
            "slack_days_allowance",
            "slack_days_max_per_assignment",
            "slack_grace_minutes",
            "scribe_lectures_per_student",
            "scribe_min_gap_days",
            "scribe_notes_due_days",
            "peer_reviews_per_group",
            "checkoff_cutoff_hours",
            "sharing_window_max_hours",
            "reminder_hours",
        )
