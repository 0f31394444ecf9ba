from django.apps import AppConfig


class MilestonesConfig(AppConfig):
    name = "apps.milestones"
    verbose_name = "Project milestones per group"

    def ready(self) -> None:
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.milestones import sources

        register_nav(NavItem("Milestones", "milestones:page", order=25))
        register_events("milestones", sources.milestone_events)
        register_reminders("milestones", sources.milestone_reminders)
