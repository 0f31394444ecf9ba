from django.apps import AppConfig


class ImpactConfig(AppConfig):
    name = "apps.impact"
    verbose_name = "Impact evidence"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Impact", "impact:page", order=33, section="coursework", staff_section="project"
            )
        )
