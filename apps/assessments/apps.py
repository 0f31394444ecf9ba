from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    name = "apps.assessments"
    verbose_name = "Pre/post assessments"

    def ready(self) -> None:
        from apps.assessments import tasks  # noqa: F401  (registers the beat task)
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Assessments",
                "assessments:list",
                order=52,
                section="coursework",
                staff_section="grading",
            )
        )
