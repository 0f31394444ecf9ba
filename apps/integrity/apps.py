from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "apps.integrity"
    verbose_name = "Academic integrity: similarity checks"

    def ready(self) -> None:
        from apps.core.invariants import register_check
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.registry import STAFF, NavItem, register_nav
        from apps.integrity import invariants, jobs, tasks  # noqa: F401 - registers the task

        register_sweeper("integrity", jobs.sweep)
        register_jobs("integrity", jobs.listed)
        register_check(
            "A similarity pair joins two different groups of the check's course, each with "
            "files in the check, both live when the check was made (they may change later)",
            invariants.pairs_across_groups,
        )
        register_nav(
            NavItem("Similarity", "integrity:checks", roles=STAFF, order=48, section="grading")
        )
