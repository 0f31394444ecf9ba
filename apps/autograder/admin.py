from django.contrib import admin

from apps.autograder.models import GradingRun, Question, QuestionSet


class QuestionInline(admin.StackedInline):
    model = Question
    extra = 0
    fields = (
        "position",
        "key",
        "kind",
        "prompt",
        "goal",
        "points",
        "params",
        "parts",
        "rel_tol",
        "abs_tol",
        "partial",
        "rubric",
        "options",
    )


@admin.register(QuestionSet)
class QuestionSetAdmin(admin.ModelAdmin):
    """Staff write and edit templates here; the set's page previews each with sample parameters and
    the computed key before it is used."""

    list_display = ("title", "key", "course", "assignment", "released_at")
    list_filter = ("course",)
    inlines = (QuestionInline,)


@admin.register(GradingRun)
class GradingRunAdmin(admin.ModelAdmin):
    list_display = ("id", "question_set", "status", "expected", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("key_version",)
