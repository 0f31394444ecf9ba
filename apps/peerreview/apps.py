from django.apps import AppConfig


class PeerReviewConfig(AppConfig):
    name = "apps.peerreview"
    verbose_name = "Peer review of reports"

    def ready(self) -> None:
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.registry import NavItem, register_nav
        from apps.peerreview import sources

        register_nav(NavItem("Peer review", "peerreview:page", order=28))
        register_events("peerreview", sources.review_events)
        register_reminders("peerreview", sources.review_reminders)
