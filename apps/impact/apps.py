from django.apps import AppConfig


class ImpactConfig(AppConfig):
    name = "apps.impact"
    verbose_name = "Impact evidence"

    def ready(self) -> None:
        from apps.core.invariants import register_check
        from apps.core.registry import NavItem, register_nav
        from apps.impact.invariants import score_is_last_given

        # No lifecycle subscriber: a score belongs to the group it was given to, and who gets it
        # is read from group membership spans, which the groups app ends in the same transaction
        # as a move, merge, dissolve or drop. Groups are dissolved, never deleted.
        register_check(
            "a group's impact score is the last one its history gave", score_is_last_given
        )

        register_nav(
            NavItem(
                "Impact", "impact:page", order=33, section="coursework", staff_section="project"
            )
        )
