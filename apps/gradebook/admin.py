"""Read-only: every score change goes through the gradebook's services, which audit it."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.gradebook.models import GradeFreeze, ScoreEntry


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ScoreEntry)
class ScoreEntryAdmin(ReadOnly):
    list_display = ("component", "student", "group", "percent", "updated_by", "updated_at")
    list_filter = ("component__course",)


@admin.register(GradeFreeze)
class GradeFreezeAdmin(ReadOnly):
    list_display = ("course", "frozen_at", "frozen_by")
