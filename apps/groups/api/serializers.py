from __future__ import annotations

from rest_framework import serializers

from apps.core.api.fields import CourseTimeTextField


class MemberSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="user.id")
    name = serializers.CharField(source="user.full_name")
    email = serializers.EmailField(source="user.email")
    joined_at = serializers.DateTimeField()
    joined_text = CourseTimeTextField(
        source="joined_at", help_text="When they joined, in course time with the zone named."
    )


class GroupBriefSerializer(serializers.Serializer):
    """What every student sees of other groups: name and size only."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    size = serializers.IntegerField()
    full = serializers.BooleanField(
        default=False, help_text="True when you may see members and the join code."
    )


class GroupFullSerializer(GroupBriefSerializer):
    join_code = serializers.CharField()
    members = MemberSerializer(many=True, source="current_members")


class GroupSeenSerializer(GroupBriefSerializer):
    """A group as the caller may see it: `join_code` and `members` are present only when `full`
    is true (staff, or the caller's own group)."""

    join_code = serializers.CharField(required=False)
    members = MemberSerializer(many=True, source="current_members", required=False)


class NameSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=80, help_text="Unique in the course (ignoring case).")


class JoinSerializer(serializers.Serializer):
    code = serializers.CharField(
        max_length=20, help_text="The group's join code; case and dashes do not matter."
    )


class UserRefSerializer(serializers.Serializer):
    user = serializers.IntegerField(help_text="Id of an active student of the course.")


class MergeSerializer(serializers.Serializer):
    into = serializers.IntegerField(
        help_text="Id of the group that receives every member; this group is dissolved."
    )


class UngroupedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(source="full_name")
    email = serializers.EmailField()
