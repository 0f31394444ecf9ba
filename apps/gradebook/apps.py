from django.apps import AppConfig


class GradebookConfig(AppConfig):
    name = "apps.gradebook"
    verbose_name = "Gradebook"

    def ready(self) -> None:
        from apps.core.models import Role
        from apps.core.registry import NavItem, Panel, register_nav, register_panel
        from apps.gradebook import panels

        register_nav(NavItem("Grades", "gradebook:page", order=35))
        register_panel(
            Panel(
                key="gradebook-mine",
                title="Course grade",
                template="gradebook/panels/mine.html",
                context=panels.student_context,
                roles=frozenset({Role.STUDENT}),
                order=40,
            )
        )
