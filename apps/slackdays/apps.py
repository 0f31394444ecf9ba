from django.apps import AppConfig


class SlackdaysConfig(AppConfig):
    name = "apps.slackdays"
    label = "slackdays"
    verbose_name = "Slack days and exceptions"

    def ready(self) -> None:
        from apps.core.lifecycle import StudentsEnrolled, subscribe
        from apps.slackdays.services import on_students_enrolled

        subscribe(StudentsEnrolled, on_students_enrolled)
        from apps.core.invariants import register_check
        from apps.slackdays.invariants import effective_not_before_base, ledger_balances

        register_check("slack balance = allowance + Σ ledger", ledger_balances)
        register_check(
            "an effective deadline is never before its base deadline", effective_not_before_base
        )
        from apps.slackdays import relief_invariants as relief

        register_check(
            "no effective deadline beyond its relief cap unless a staff override says so",
            relief.deadlines_within_cap,
        )
        register_check(
            "no slack counted without its live spend in the ledger",
            relief.slack_counted_from_live_spends,
        )
        register_check("group relief is equal for every current member", relief.group_relief_equal)
        from apps.calendar.registry import register_events, register_reminders
        from apps.core.models import Role
        from apps.core.registry import STAFF, NavItem, Panel, register_nav, register_panel
        from apps.slackdays import panels, sources

        register_events(
            "assignments",
            sources.assignment_events,
            reads=("slackdays", "coursecalendar", "groups", "core.Membership"),
        )
        register_reminders("assignments", sources.assignment_reminders)

        register_nav(
            NavItem(
                "Slack days",
                "slackdays:mine",
                roles=frozenset({Role.STUDENT}),
                order=25,
                section="coursework",
            )
        )
        register_nav(
            NavItem(
                "Slack & exceptions", "slackdays:staff", roles=STAFF, order=25, section="deadlines"
            )
        )
        register_panel(
            Panel(
                key="glance-slack",
                title="Slack days",
                template="slackdays/panels/glance.html",
                context=panels.glance_context,
                roles=frozenset({Role.STUDENT}),
                order=1,
                reads=("slackdays", "coursecalendar", "groups", "core.Course"),
            )
        )

        from apps.core.registry import TodaySource, register_today
        from apps.slackdays import today

        register_today(
            TodaySource(
                "slack-deadlines",
                today.deadlines,
                roles=frozenset({Role.STUDENT}),
                reads=("slackdays", "coursecalendar", "groups", "core.Membership"),
            )
        )
        register_today(TodaySource("slack-late-work", today.late_work, roles=STAFF))
