from django.apps import AppConfig


class OnboardingConfig(AppConfig):
    name = "apps.onboarding"
    verbose_name = "Onboarding questionnaire"

    def ready(self) -> None:
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.registry import NavItem, register_nav
        from apps.onboarding import jobs, tasks  # noqa: F401 - registers the tasks by name

        register_sweeper("onboarding", jobs.sweep)
        register_jobs("onboarding", jobs.listed)

        register_nav(
            NavItem(
                "Questionnaire", "onboarding:page", order=8, section="group", staff_section="people"
            )
        )
