from django.apps import AppConfig


class LtiConfig(AppConfig):
    name = "apps.lti"
    verbose_name = "LMS (LTI 1.3)"

    def ready(self) -> None:
        from apps.core.registry import STAFF, NavItem, register_nav
        from apps.lti import tasks  # noqa: F401  (registers the beat task)

        register_nav(NavItem("LMS", "lti:lms", roles=STAFF, order=92, section="setup"))
