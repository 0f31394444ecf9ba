from django.apps import AppConfig


class GradebookConfig(AppConfig):
    name = "apps.gradebook"
    verbose_name = "Gradebook"

    def ready(self) -> None:
        # No dashboard panel: a grade reads every scoring app (about ten queries), too much for
        # the page every student opens at the deadline; "Grades" in the menu is one tap away.
        from apps.core.invariants import register_check
        from apps.core.lifecycle import (
            GroupDissolved,
            GroupMerged,
            MemberLeft,
            describe,
            subscribe,
        )
        from apps.core.registry import NavItem, register_nav
        from apps.gradebook import invariants, lifecycle

        subscribe(MemberLeft, lifecycle.on_member_left)
        subscribe(GroupDissolved, lifecycle.on_group_dissolved)
        subscribe(GroupMerged, lifecycle.on_group_merged)
        describe(GroupDissolved, lifecycle.dissolve_preview)
        register_check(
            "no score a student can read counts unreleased results", invariants.released_only
        )
        register_check(
            "a student who leaves a group keeps its scores given while a member",
            invariants.group_scores_kept,
        )

        register_nav(
            NavItem("Grades", "gradebook:page", order=35, section="grades", staff_section="grading")
        )
