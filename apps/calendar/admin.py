from django.contrib import admin

from apps.calendar.models import Assignment, Lecture, Milestone, RecessDay


@admin.register(Lecture)
class LectureAdmin(admin.ModelAdmin):
    list_display = ("number", "title", "starts_at", "is_guest", "course")
    list_filter = ("course", "is_guest")
    search_fields = ("title",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("code", "title", "release_at", "due_at", "course")
    list_filter = ("course",)


@admin.register(Milestone)
class MilestoneAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "due_at", "course")
    list_filter = ("course",)


@admin.register(RecessDay)
class RecessDayAdmin(admin.ModelAdmin):
    list_display = ("date", "note", "course")
    list_filter = ("course",)
