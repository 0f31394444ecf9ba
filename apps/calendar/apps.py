from django.apps import AppConfig


class CalendarConfig(AppConfig):
    name = "apps.calendar"
    label = "coursecalendar"  # "calendar" would shadow the standard library module's label
    verbose_name = "Calendar: lectures, assignments, milestones"

    def ready(self) -> None:
        from apps.calendar import panels
        from apps.core.registry import NavItem, Panel, register_nav, register_panel

        register_nav(NavItem("Schedule", "calendar:schedule", order=20))
        register_panel(
            Panel(
                key="deadlines",
                title="Deadlines",
                template="calendar/panels/deadlines.html",
                context=panels.deadlines_context,
                order=10,
                wide=True,
            )
        )
        register_panel(
            Panel(
                key="lectures",
                title="Next lectures",
                template="calendar/panels/lectures.html",
                context=panels.lectures_context,
                order=30,
            )
        )
