from django.apps import AppConfig


class ContributionsConfig(AppConfig):
    name = "apps.contributions"
    verbose_name = "Question contributions"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(NavItem("Contribute", "contributions:page", order=32))
