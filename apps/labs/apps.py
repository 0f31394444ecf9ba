from django.apps import AppConfig


class LabsConfig(AppConfig):
    name = "apps.labs"
    label = "labs"
    verbose_name = "Labs: prediction-locked steps and each student's lab record"

    def ready(self) -> None:
        from apps.core.registry import NavItem, register_nav
        from apps.core.versions import drop_course_version_on_write
        from apps.labs.models import CourseLab

        drop_course_version_on_write(CourseLab)  # the lab windows Today reads

        register_nav(
            NavItem("Labs", "labs:list", order=31, section="coursework", staff_section="grading")
        )

        from apps.core.models import Role
        from apps.core.registry import TodaySource, register_today
        from apps.labs import today

        register_today(
            TodaySource(
                "labs-open", today.open_labs, roles=frozenset({Role.STUDENT}), reads=("labs",)
            )
        )
