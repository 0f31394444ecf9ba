from django.apps import AppConfig


class AutograderConfig(AppConfig):
    name = "apps.autograder"
    label = "autograder"
    verbose_name = "Autograder"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(NavItem("Questions", "autograder:sets", order=50))
