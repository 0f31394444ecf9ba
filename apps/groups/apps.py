from django.apps import AppConfig


class GroupsConfig(AppConfig):
    name = "apps.groups"
    label = "groups"
    verbose_name = "Groups"

    def ready(self) -> None:
        from apps.core.lifecycle import StudentDropped, subscribe
        from apps.core.models import Role
        from apps.groups.services import on_student_dropped

        subscribe(StudentDropped, on_student_dropped)
        from apps.core.registry import STAFF, NavItem, Panel, register_nav, register_panel
        from apps.groups import panels

        register_nav(
            NavItem(
                "My group",
                "groups:mine",
                roles=frozenset({Role.STUDENT}),
                order=30,
                section="group",
            )
        )
        register_nav(NavItem("Groups", "groups:board", roles=STAFF, order=30, section="people"))
        register_panel(
            Panel(
                key="my-group",
                title="My group",
                template="groups/panels/my_group.html",
                context=panels.my_group_context,
                roles=frozenset({Role.STUDENT}),
                order=20,
                reads=("groups", "core.User"),
            )
        )
        register_panel(
            Panel(
                key="groups-overview",
                title="Groups",
                template="groups/panels/overview.html",
                context=panels.groups_overview_context,
                roles=STAFF,
                order=20,
            )
        )

        from apps.core.registry import STAFF, TodaySource, register_today
        from apps.groups import today

        register_today(TodaySource("groups-decisions", today.decisions, roles=STAFF))
