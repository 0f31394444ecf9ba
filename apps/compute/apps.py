from django.apps import AppConfig


class ComputeConfig(AppConfig):
    name = "apps.compute"
    label = "compute"
    verbose_name = "Compute: nodes and static IPs"

    def ready(self) -> None:
        """Wire the three floors of compute, lowest first: the board, then the cloud (which
        follows the board), then usage (which watches both). Each floor's subscribers to a
        lifecycle event run after the floors below it have reacted."""
        self._board()
        self._cloud()
        self._usage()

    def _board(self) -> None:
        from apps.calendar.registry import register_events
        from apps.compute.board import (
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
        register_events("windows", sources.window_events, reads=("compute",))
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
                reads=("compute", "groups", "core.User"),
            )
        )

        from apps.compute.board import today
        from apps.core.registry import TodaySource, register_today

        register_today(TodaySource("compute-decisions", today.decisions, roles=STAFF))
        register_today(
            TodaySource("compute-course-wide", today.course_wide, reads=("compute", "groups"))
        )

    def _cloud(self) -> None:
        from apps.compute.cloud import (
            checks,  # noqa: F401  (system checks)
            jobs,
            signals,  # noqa: F401  (model signals queue the cloud's jobs)
            sync,
            tasks,  # noqa: F401  (queued by name)
        )
        from apps.compute.cloud import lifecycle as cloud_lifecycle
        from apps.core.invariants import register_check
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.lifecycle import GroupMerged, MemberLeft, StudentDropped, subscribe

        register_check(
            "the cloud matches the board (keys, addresses, rules)", sync.unexplained_drift
        )
        register_sweeper("cloud", jobs.sweep)
        register_jobs("cloud", jobs.listed)
        subscribe(GroupMerged, cloud_lifecycle.on_group_merged)
        subscribe(MemberLeft, cloud_lifecycle.on_member_left)
        subscribe(StudentDropped, cloud_lifecycle.on_student_dropped)

    def _usage(self) -> None:
        from apps.compute.board.hooks import register_node_page
        from apps.compute.cloud.hooks import register_start_guard
        from apps.compute.usage import (
            autostop,
            quotas,
            tasks,  # noqa: F401  (run by beat, by name)
            today,
            views,
        )
        from apps.core.invariants import register_check
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, TodaySource, register_nav, register_today

        STUDENT = frozenset({Role.STUDENT})
        register_today(
            TodaySource("compute-quota", today.quota, roles=STUDENT, reads=("compute", "groups"))
        )
        register_today(TodaySource("compute-opt-outs", today.opt_outs, roles=STAFF))
        register_check(
            "no stop courseops made on its own lacks its audit row", autostop.stops_without_audit
        )
        register_nav(
            NavItem(
                "Quotas and shutdowns", "compute:usage", roles=STAFF, order=38, section="compute"
            )
        )
        # A group over its GPU-hour quota may not start its node; its node page shows the quota.
        register_start_guard(quotas.start_refusal)
        from apps.compute.usage import quota_cache

        quota_cache.connect()
        register_node_page(views.node_page_context)
