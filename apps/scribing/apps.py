from django.apps import AppConfig


class ScribingConfig(AppConfig):
    name = "apps.scribing"
    verbose_name = "Scribe duties"

    def ready(self) -> None:
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.scribing import sources

        register_nav(NavItem("Scribing", "scribing:page", order=27))
        register_events("scribing", sources.duty_events)
        register_reminders("scribing", sources.duty_reminders)
