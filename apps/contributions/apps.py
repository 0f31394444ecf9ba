from django.apps import AppConfig


class ContributionsConfig(AppConfig):
    name = "apps.contributions"
    verbose_name = "Question contributions"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Contribute",
                "contributions:page",
                order=32,
                section="coursework",
                staff_section="project",
            )
        )

        from apps.contributions import today
        from apps.core.registry import STAFF, TodaySource, register_today

        register_today(TodaySource("contributions-queue", today.to_review, roles=STAFF))
