from django.apps import AppConfig


class ExtensionsConfig(AppConfig):
    name = "apps.extensions"
    verbose_name = "Extension requests"

    def ready(self) -> None:
        from apps.core.invariants import register_check
        from apps.core.lifecycle import (
            GroupDissolved,
            GroupMerged,
            MemberLeft,
            StudentDropped,
            subscribe,
        )
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, TodaySource, register_nav, register_today
        from apps.extensions import lifecycle, tasks, today  # noqa: F401  (tasks: registered)

        subscribe(StudentDropped, lifecycle.on_student_dropped)
        subscribe(GroupDissolved, lifecycle.on_group_dissolved)
        subscribe(GroupMerged, lifecycle.on_group_merged)
        subscribe(MemberLeft, lifecycle.on_member_left)
        register_check(
            "no open extension request of a dropped student or a dissolved group",
            lifecycle.open_requests_nobody_can_use,
        )
        from apps.extensions.invariants import relief_has_its_source

        register_check(
            "no relief without its source row (an approved request's extension)",
            relief_has_its_source,
        )
        register_nav(
            NavItem(
                "Extensions",
                "extensions:page",
                order=16,
                section="grades",
                staff_section="grading",
            )
        )
        register_today(
            TodaySource(
                "extensions-student",
                today.for_student,
                roles=frozenset({Role.STUDENT}),
                reads=("extensions",),
            )
        )
        register_today(TodaySource("extensions-queue", today.for_staff, roles=STAFF))
