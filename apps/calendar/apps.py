from django.apps import AppConfig


class CalendarConfig(AppConfig):
    name = "apps.calendar"
    label = "coursecalendar"  # "calendar" would shadow the standard library module's label
    verbose_name = "Calendar: lectures, assignments, milestones"

    def ready(self) -> None:
        from apps.calendar import (
            cache,
            panels,
            sources,
            tasks,  # noqa: F401  (queued by name: register it in every process)
        )

        cache.connect()
        from apps.calendar import jobs
        from apps.core.jobs import register_jobs, register_sweeper

        register_sweeper("reminders", jobs.sweep)
        register_jobs("reminders", jobs.listed)
        from apps.calendar import today
        from apps.calendar.registry import event_reads, register_events
        from apps.core.models import Role
        from apps.core.registry import (
            STAFF,
            NavItem,
            Panel,
            TodaySource,
            register_nav,
            register_panel,
            register_today,
        )

        register_events("calendar", sources.calendar_events, reads=("coursecalendar",))
        register_nav(
            NavItem(
                "Calendar",
                "calendar:calendar",
                order=20,
                section="calendar",
                staff_section="deadlines",
            )
        )
        register_panel(
            Panel(
                key="deadlines",
                title="Deadlines",
                template="calendar/panels/deadlines.html",
                context=panels.deadlines_context,
                order=10,
                wide=True,
                reads=lambda: ("coursecalendar", "core.Course", *event_reads()),
            )
        )
        register_panel(
            Panel(
                key="next-7-days",
                title="Due in the next 7 days",
                template="calendar/panels/week.html",
                context=panels.week_context,
                order=5,
                roles=STAFF,  # a student's week is Today's own list
            )
        )
        register_panel(
            Panel(
                key="about",
                title="About the course",
                template="calendar/panels/about.html",
                context=panels.about_context,
                order=90,
                reads=("coursecalendar", "core.Course"),
            )
        )
        register_panel(
            Panel(
                key="lectures",
                title="Next lectures",
                template="calendar/panels/lectures.html",
                context=panels.lectures_context,
                order=30,
                reads=("coursecalendar",),
            )
        )
        register_today(
            TodaySource(
                "calendar-due",
                today.due_this_week,
                roles=frozenset({Role.STUDENT}),
                reads=lambda: ("coursecalendar", *event_reads()),
            )
        )
