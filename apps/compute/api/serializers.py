from __future__ import annotations

from rest_framework import serializers

from apps.compute.models import (
    Allocation,
    Incident,
    Node,
    RunRecord,
    SharingWindow,
    StaticIP,
    WindowNode,
)
from apps.core.api.fields import CourseDateTimeField, CourseTimeTextField, CourseZoneField


class NodeSerializer(serializers.ModelSerializer):
    region = serializers.CharField(read_only=True)

    class Meta:
        model = Node
        fields = (
            "id",
            "name",
            "gcp_project",
            "zone",
            "region",
            "machine_type",
            "gpu_model",
            "gpu_count",
            "internal_ip",
            "status",
            "cloud_status",
        )
        read_only_fields = ("cloud_status",)


class StaticIPSerializer(serializers.ModelSerializer):
    class Meta:
        model = StaticIP
        fields = ("id", "address", "resource_name", "region", "status")


class AllocationSerializer(serializers.ModelSerializer):
    group = serializers.CharField(source="group.name")
    group_id = serializers.IntegerField()
    node = NodeSerializer()
    static_ip = serializers.CharField(source="static_ip.address")

    class Meta:
        model = Allocation
        fields = ("id", "group_id", "group", "node", "static_ip", "started_at", "ended_at")


class AllocateSerializer(serializers.Serializer):
    group = serializers.IntegerField(help_text="Group id.")
    node = serializers.IntegerField(
        required=False, help_text="Node id; the first free node when left out."
    )
    static_ip = serializers.IntegerField(
        required=False, help_text="IP id; the first free IP in the node's region when left out."
    )
    override_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=300,
        help_text="Required for a group under the course's minimum size (audited).",
    )


class WindowNodeSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name")
    owner = serializers.CharField(source="owner.name")

    class Meta:
        model = WindowNode
        fields = ("node_id", "node", "owner", "rank", "approved_at")


class WindowSerializer(serializers.ModelSerializer):
    requester = serializers.CharField(source="requester.name")
    nodes = WindowNodeSerializer(many=True)

    class Meta:
        model = SharingWindow
        fields = (
            "id",
            "requester",
            "starts_at",
            "ends_at",
            "purpose",
            "master_port",
            "status",
            "note",
            "nodes",
        )


class WindowRequestSerializer(serializers.Serializer):
    node_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="Other groups' node ids."
    )
    starts_at = CourseDateTimeField(help_text="ISO 8601 with offset; must be in the future.")
    ends_at = CourseDateTimeField(help_text="At most the course's limit (48 h) after the start.")
    purpose = serializers.CharField(required=False, allow_blank=True, max_length=300)
    master_port = serializers.IntegerField(
        required=False, default=29500, min_value=1024, max_value=65535
    )


class NoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=300)
    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Approve: staff override a lending group's pending consent (refused without).",
    )


class IncidentSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name")
    group = serializers.CharField(source="group.name", allow_null=True, default=None)
    # what the incidents page writes beside each report (#68): who reported it, when it
    # happened in course time with the zone named, and the state as the page names it
    reported_by = serializers.CharField(source="reported_by.__str__", read_only=True)
    occurred_text = CourseTimeTextField(source="occurred_at")
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    timezone = CourseZoneField()

    class Meta:
        model = Incident
        fields = (
            "id",
            "node",
            "group",
            "reported_by",
            "occurred_at",
            "occurred_text",
            "timezone",
            "status_label",
            "summary",
            "job_ids",
            "logs",
            "repro",
            "status",
            "staff_notes",
            "course_wide",
            "created_at",
        )


class CourseWideIncidentSerializer(serializers.ModelSerializer):
    """What every student may read of a course-wide incident: never logs, job IDs or repro."""

    node = serializers.CharField(source="node.name")
    node_status = serializers.CharField(source="node.status")
    groups_affected = serializers.IntegerField(source="n_affected")

    class Meta:
        model = Incident
        fields = (
            "id",
            "node",
            "node_status",
            "occurred_at",
            "summary",
            "status",
            "staff_notes",
            "groups_affected",
            "updated_at",
        )


class IncidentReportSerializer(serializers.Serializer):
    node = serializers.IntegerField()
    occurred_at = CourseDateTimeField()
    summary = serializers.CharField(max_length=200)
    job_ids = serializers.CharField(required=False, allow_blank=True, max_length=500)
    logs = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    repro = serializers.CharField(required=False, allow_blank=True)


class IncidentStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Incident.Status.choices)
    note = serializers.CharField(required=False, allow_blank=True)
    course_wide = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="Show it to every student."
    )


class FilesSerializer(serializers.Serializer):
    hosts = serializers.CharField()
    ssh_config = serializers.CharField()
    launch = serializers.CharField()
    launch_env = serializers.DictField()
    firewall = serializers.CharField()


class RunRecordSerializer(serializers.ModelSerializer):
    group = serializers.CharField(source="group.name")
    recorded_by = serializers.CharField(source="created_by.email")

    class Meta:
        model = RunRecord
        fields = (
            "id",
            "group",
            "title",
            "repository",
            "commit",
            "config_text",
            "config_sha256",
            "seed",
            "artifacts",
            "nodes",
            "window",
            "notes",
            "recorded_by",
            "created_at",
        )


class RunRecordCreateSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=120, help_text="A name for the run.")
    repository = serializers.CharField(max_length=300, help_text="Where the code lives.")
    commit = serializers.CharField(max_length=40, help_text="7–40 hexadecimal characters.")
    config_text = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, help_text="At most 256 KB."
    )
    seed = serializers.IntegerField(required=False, allow_null=True)
    artifacts = serializers.CharField(required=False, allow_blank=True, max_length=500)
    nodes = serializers.CharField(required=False, allow_blank=True, max_length=300)
    window = serializers.IntegerField(required=False, allow_null=True)
    notes = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    group = serializers.IntegerField(
        required=False, allow_null=True, help_text="Staff only: the group the run belongs to."
    )
