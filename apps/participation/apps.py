from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    name = "apps.participation"
    verbose_name = "Participation"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Participation",
                "participation:page",
                order=34,
                section="grades",
                staff_section="people",
            )
        )
