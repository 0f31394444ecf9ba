from django.apps import AppConfig


class PeerReviewConfig(AppConfig):
    name = "apps.peerreview"
    verbose_name = "Peer review of reports"

    def ready(self) -> None:
        from apps.core.invariants import register_check
        from apps.core.lifecycle import GroupDissolved, GroupMerged, describe, subscribe
        from apps.peerreview import (
            lifecycle,
            tasks,  # noqa: F401  (queued by name: register it in every process)
        )

        subscribe(GroupDissolved, lifecycle.on_group_dissolved)
        subscribe(GroupMerged, lifecycle.on_group_merged)
        describe(GroupDissolved, lifecycle.dissolve_preview)
        register_check(
            "no open peer-review pair names a dissolved group",
            lifecycle.open_pairs_of_ended_groups,
        )
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.peerreview import sources

        register_nav(
            NavItem(
                "Peer review",
                "peerreview:page",
                order=28,
                section="coursework",
                staff_section="project",
            )
        )
        register_events("peerreview", sources.review_events, reads=("peerreview", "groups"))
        register_reminders("peerreview", sources.review_reminders)

        from apps.core.models import Role
        from apps.core.registry import TodaySource, register_today
        from apps.peerreview import today

        register_today(
            TodaySource(
                "reviews-to-write",
                today.to_write,
                roles=frozenset({Role.STUDENT}),
                reads=("peerreview", "groups"),
            )
        )
