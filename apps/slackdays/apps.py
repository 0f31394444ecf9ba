from django.apps import AppConfig


class SlackdaysConfig(AppConfig):
    name = "apps.slackdays"
    label = "slackdays"
    verbose_name = "Slack days and exceptions"

    def ready(self) -> None:
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, register_nav

        register_nav(
            NavItem("Slack days", "slackdays:mine", roles=frozenset({Role.STUDENT}), order=25)
        )
        register_nav(NavItem("Slack & exceptions", "slackdays:staff", roles=STAFF, order=25))
