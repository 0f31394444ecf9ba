from django.contrib import admin

from apps.scribing.models import ScribeDuty, ScribePlan, ScribeSwap


@admin.register(ScribePlan)
class ScribePlanAdmin(admin.ModelAdmin):
    list_display = ("course", "per_student", "min_gap_days", "solve_status", "published_at")
    exclude = ("proposal",)


@admin.register(ScribeDuty)
class ScribeDutyAdmin(admin.ModelAdmin):
    list_display = ("student", "lecture", "due_at", "status", "submitted_at")
    list_filter = ("course", "status")
    raw_id_fields = ("student", "lecture", "reviewed_by")


@admin.register(ScribeSwap)
class ScribeSwapAdmin(admin.ModelAdmin):
    list_display = ("proposer", "other", "duty", "status", "created_at")
    list_filter = ("course", "status")
    raw_id_fields = ("proposer", "other", "duty", "other_duty")
