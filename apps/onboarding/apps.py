from django.apps import AppConfig


class OnboardingConfig(AppConfig):
    name = "apps.onboarding"
    verbose_name = "Onboarding questionnaire"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Questionnaire", "onboarding:page", order=8, section="group", staff_section="people"
            )
        )
