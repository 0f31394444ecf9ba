from django.contrib import admin

from apps.milestones.models import GroupMilestone


@admin.register(GroupMilestone)
class GroupMilestoneAdmin(admin.ModelAdmin):
    list_display = ("group", "milestone", "submitted_at", "extension_hours", "excused")
    list_filter = ("course", "milestone", "excused")
    raw_id_fields = ("group", "submitted_by")
