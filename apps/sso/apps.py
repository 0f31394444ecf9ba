from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "apps.sso"
    verbose_name = "Campus sign-on"

    def ready(self) -> None:
        from apps.sso import (
            checks,  # noqa: F401  (registers the start-up check)
            tasks,  # noqa: F401  (queued by name: register it in every process)
        )
