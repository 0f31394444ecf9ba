from django.apps import AppConfig


class GradebookConfig(AppConfig):
    name = "apps.gradebook"
    verbose_name = "Gradebook"

    def ready(self) -> None:
        # No dashboard panel: a grade reads every scoring app (about ten queries), too much for
        # the page every student opens at the deadline; "Grades" in the menu is one tap away.
        from apps.core.registry import NavItem, register_nav

        register_nav(NavItem("Grades", "gradebook:page", order=35))
