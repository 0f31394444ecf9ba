from django.apps import AppConfig


class RosterConfig(AppConfig):
    name = "apps.roster"
    label = "roster"
    verbose_name = "Roster import"

    def ready(self) -> None:
        from apps.core.registry import STAFF, NavItem, register_nav

        register_nav(NavItem("Roster", "roster:page", roles=STAFF, order=40, section="people"))
