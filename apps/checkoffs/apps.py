from django.apps import AppConfig


class CheckoffsConfig(AppConfig):
    name = "apps.checkoffs"
    verbose_name = "Checkoffs and sign-ups"

    def ready(self) -> None:
        from apps.calendar.registry import register_events, register_reminders
        from apps.checkoffs import (
            lifecycle,
            panels,
            sources,
            tasks,  # noqa: F401  (queued by name: register it in every process)
        )
        from apps.core.invariants import register_check
        from apps.core.lifecycle import GroupDissolved, GroupMerged, describe, subscribe
        from apps.core.lifecycle import StaffRemoved as Left  # a staff member off the staff

        subscribe(Left, lifecycle.on_staff_removed)
        describe(Left, lifecycle.staff_removed_preview)
        register_check(
            "no checkoff slot to come is run by someone off the staff",
            lifecycle.slots_run_by_non_staff,
        )
        subscribe(GroupDissolved, lifecycle.on_group_dissolved)
        subscribe(GroupMerged, lifecycle.on_group_merged)
        describe(GroupDissolved, lifecycle.dissolve_preview)
        register_check(
            "no booking belongs to a dissolved group; slot counts match their bookings",
            lifecycle.booking_invariants,
        )
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, Panel, register_nav, register_panel

        register_nav(
            NavItem(
                "Checkoffs",
                "checkoffs:page",
                order=29,
                section="coursework",
                staff_section="grading",
            )
        )
        register_panel(
            Panel(
                key="checkoffs-mine",
                title="Checkoffs",
                template="checkoffs/panels/mine.html",
                context=panels.student_context,
                roles=frozenset({Role.STUDENT}),
                order=12,
                reads=("checkoffs", "groups"),
            )
        )
        register_panel(
            Panel(
                key="checkoffs-today",
                title="Checkoffs today",
                template="checkoffs/panels/today.html",
                context=panels.staff_context,
                roles=STAFF,
                order=26,
            )
        )
        register_events("checkoffs", sources.booking_events, reads=("checkoffs", "groups"))
        register_reminders("checkoffs", sources.booking_reminders)

        from apps.checkoffs import today
        from apps.core.registry import TodaySource, register_today

        register_today(
            TodaySource(
                "checkoff-bookings",
                today.bookings,
                roles=frozenset({Role.STUDENT}),
                reads=("checkoffs", "groups"),
            )
        )
