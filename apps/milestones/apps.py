from django.apps import AppConfig


class MilestonesConfig(AppConfig):
    name = "apps.milestones"
    verbose_name = "Project milestones per group"

    def ready(self) -> None:
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.milestones import sources

        register_nav(
            NavItem(
                "Milestones",
                "milestones:page",
                order=25,
                section="coursework",
                staff_section="project",
            )
        )
        register_events(
            "milestones", sources.milestone_events, reads=("milestones", "coursecalendar", "groups")
        )
        register_reminders("milestones", sources.milestone_reminders)

        from apps.core.models import Role
        from apps.core.registry import TodaySource, register_today
        from apps.milestones import today

        register_today(
            TodaySource(
                "milestones-due",
                today.due,
                roles=frozenset({Role.STUDENT}),
                reads=("milestones", "coursecalendar", "groups"),
            )
        )
