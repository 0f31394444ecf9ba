from django.apps import AppConfig


class ComputeConfig(AppConfig):
    name = "apps.compute"
    label = "compute"
    verbose_name = "Compute: nodes and static IPs"

    def ready(self) -> None:
        from apps.calendar.registry import register_events
        from apps.compute import (
            lifecycle,
            panels,
            sources,
            tasks,  # noqa: F401  (queued by name from the reactions)
        )
        from apps.core.invariants import register_check
        from apps.core.lifecycle import GroupDissolved, GroupMerged, describe, subscribe

        subscribe(GroupDissolved, lifecycle.on_group_dissolved)
        describe(GroupDissolved, lifecycle.dissolve_preview)
        subscribe(GroupMerged, lifecycle.on_group_merged)
        register_check(
            "no dissolved group holds a node, an IP or a live window",
            lifecycle.dissolved_group_holdings,
        )
        register_check(
            "no live window borrows a node its lender no longer holds",
            lifecycle.windows_on_held_nodes,
        )
        from apps.compute import checks, cloud, jobs, signals  # noqa: F401
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.lifecycle import MemberLeft, StudentDropped

        register_check(
            "the cloud matches the board (keys, addresses, rules)", cloud.unexplained_drift
        )
        register_sweeper("cloud", jobs.sweep)
        register_jobs("cloud", jobs.listed)
        subscribe(MemberLeft, lifecycle.on_member_left)
        subscribe(StudentDropped, lifecycle.on_student_dropped)

        register_events("windows", sources.window_events)
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, Panel, register_nav, register_panel

        register_nav(
            NavItem(
                "My node",
                "compute:mine",
                roles=frozenset({Role.STUDENT}),
                order=35,
                section="group",
            )
        )
        register_nav(NavItem("Compute", "compute:board", roles=STAFF, order=35, section="compute"))
        register_nav(
            NavItem(
                "SSH keys",
                "compute:ssh-keys",
                course_scoped=False,
                order=36,
                section="group",
                staff_section="compute",
            )
        )
        register_nav(
            NavItem(
                "Incidents", "compute:incidents", order=36, section="group", staff_section="compute"
            )
        )
        register_nav(
            NavItem(
                "Run records", "compute:runs", order=37, section="group", staff_section="compute"
            )
        )

        register_panel(
            Panel(
                key="compute-inventory",
                title="Compute",
                template="compute/panels/inventory.html",
                context=panels.inventory_context,
                roles=STAFF,
                order=25,
            )
        )
        register_panel(
            Panel(
                key="glance-node",
                title="Your group's node",
                template="compute/panels/my_node.html",
                context=panels.my_node_context,
                roles=frozenset({Role.STUDENT}),
                order=2,
            )
        )

        from apps.compute import today
        from apps.core.registry import STAFF, TodaySource, register_today

        STUDENT = frozenset({Role.STUDENT})
        register_today(TodaySource("compute-decisions", today.decisions, roles=STAFF))
        register_today(TodaySource("compute-course-wide", today.course_wide))

        # Quotas and schedules per group (a future `usage` app's registrations).
        from apps.compute import autostop, usage_tasks, usage_today  # noqa: F401

        register_today(TodaySource("compute-quota", usage_today.quota, roles=STUDENT))
        register_today(TodaySource("compute-opt-outs", usage_today.opt_outs, roles=STAFF))
        register_check(
            "no stop courseops made on its own lacks its audit row", autostop.stops_without_audit
        )
        register_nav(
            NavItem(
                "Quotas and shutdowns", "compute:usage", roles=STAFF, order=38, section="compute"
            )
        )
