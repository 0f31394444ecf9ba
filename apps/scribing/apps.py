from django.apps import AppConfig


class ScribingConfig(AppConfig):
    name = "apps.scribing"
    verbose_name = "Scribe duties"

    def ready(self) -> None:
        from apps.core.lifecycle import StudentDropped, subscribe
        from apps.scribing.lifecycle import on_student_dropped

        subscribe(StudentDropped, on_student_dropped)
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.scribing import jobs

        register_sweeper("scribing", jobs.sweep)
        register_jobs("scribing", jobs.listed)
        from apps.core.invariants import register_check
        from apps.scribing.invariants import one_duty_per_lecture

        register_check("no student holds two scribe duties for one lecture", one_duty_per_lecture)
        # The services queue this app's tasks by name (tasks import services, never the
        # reverse): importing the module registers the names in every process.
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.scribing import (
            sources,
            tasks,  # noqa: F401
        )

        register_nav(
            NavItem(
                "Scribing", "scribing:page", order=27, section="coursework", staff_section="grading"
            )
        )
        register_events("scribing", sources.duty_events, reads=("scribing", "coursecalendar"))
        register_reminders("scribing", sources.duty_reminders)

        from apps.core.models import Role
        from apps.core.registry import STAFF, TodaySource, register_today
        from apps.scribing import today

        register_today(
            TodaySource(
                "scribe-duties",
                today.duties,
                roles=frozenset({Role.STUDENT}),
                reads=("scribing", "coursecalendar"),
            )
        )
        register_today(TodaySource("scribe-notes", today.to_review, roles=STAFF))
