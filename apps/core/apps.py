from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"
    verbose_name = "Core: people, courses, roles, audit"

    def ready(self) -> None:
        from apps.core import (
            checks,  # noqa: F401  (registers the start-up checks)
            doors,
            outbox,
            panels,
            tasks,  # noqa: F401  (queued by name: register it in every process)
            todaycache,
        )
        from apps.core.accounts import one_account_per_email
        from apps.core.invariants import register_check
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.registry import STAFF, NavItem, Panel, register_nav, register_panel

        todaycache.connect()
        register_check("one account per e-mail (any spelling)", one_account_per_email)
        register_sweeper("outbox", outbox.sweep)
        register_sweeper("doors", doors.sweep)
        register_jobs("outbox", outbox.listed)

        register_nav(NavItem("Today", "core:dashboard", order=0, section="today"))
        register_nav(NavItem("Checks", "core:check", roles=STAFF, order=98, section="setup"))
        register_nav(NavItem("Jobs", "core:jobs", roles=STAFF, order=99, section="setup"))
        register_nav(NavItem("Help", "core:help", order=90, section="help", staff_section="setup"))
        register_nav(
            NavItem(
                "API tokens",
                "tokens",
                course_scoped=False,
                order=91,
                section="help",
                staff_section="setup",
            )
        )
        register_nav(
            NavItem(
                "API reference",
                "api-docs",
                course_scoped=False,
                order=92,
                section="help",
                staff_section="setup",
            )
        )
        register_panel(
            Panel(
                key="people",
                title="People",
                template="core/panels/people.html",
                context=panels.people_context,
                roles=STAFF,
                order=5,
            )
        )
