from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    name = "apps.participation"
    verbose_name = "Participation"

    def ready(self) -> None:
        from apps.core.models import Role
        from apps.core.registry import NavItem, Panel, register_nav, register_panel
        from apps.participation import panels

        register_nav(
            NavItem(
                "Participation",
                "participation:page",
                order=34,
                section="grades",
                staff_section="people",
            )
        )
        register_nav(
            NavItem(
                "Lecture check-in",
                "participation:checkin",
                order=3,
                section="coursework",
                staff_section="people",
            )
        )
        # First on a student's Today while a lecture's check-in is open; absent otherwise.
        register_panel(
            Panel(
                "checkin",
                "Lecture check-in",
                "participation/panel_checkin.html",
                panels.checkin_box,
                roles=frozenset({Role.STUDENT}),
                order=0,
            )
        )
