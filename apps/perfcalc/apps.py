from django.apps import AppConfig


class PerfcalcConfig(AppConfig):
    name = "apps.perfcalc"
    label = "perfcalc"
    verbose_name = "Performance calculator"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav

        register_nav(
            NavItem(
                "Calculator",
                "perfcalc:index",
                course_scoped=False,
                order=60,
                section="calculator",
                staff_section="grading",
            )
        )
