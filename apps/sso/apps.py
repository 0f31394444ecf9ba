from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "apps.sso"
    verbose_name = "Campus sign-on"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav
        from apps.sso import (
            checks,  # noqa: F401  (registers the start-up check)
            tasks,  # noqa: F401  (queued by name: register it in every process)
        )

        register_nav(
            NavItem(
                "Campus accounts",
                "sso-account",
                course_scoped=False,
                order=93,
                section="help",
                staff_section="setup",
            )
        )
