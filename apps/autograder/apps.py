from django.apps import AppConfig


class AutograderConfig(AppConfig):
    name = "apps.autograder"
    label = "autograder"
    verbose_name = "Autograder"

    def ready(self) -> None:
        from apps.autograder.models import Question, QuestionSet
        from apps.core.versions import drop_course_version_on_write

        # The unreleased sets and their question counts Today reads (`today._unreleased_sets`).
        drop_course_version_on_write(QuestionSet)
        drop_course_version_on_write(
            Question,
            lambda q: (
                QuestionSet.objects.filter(pk=q.question_set_id)
                .values_list("course_id", flat=True)
                .first()
            ),
        )
        # The services queue this app's tasks by name (tasks import services, never the
        # reverse): importing the module registers the names in every process.
        from apps.autograder import (  # checks: registers the shipped banks' start-up check
            checks,  # noqa: F401
            jobs,
            tasks,  # noqa: F401
        )
        from apps.core.jobs import register_jobs, register_sweeper
        from apps.core.registry import STAFF, NavItem, register_nav

        register_sweeper("autograder", jobs.sweep)
        from apps.autograder import handback, lifecycle
        from apps.core.invariants import register_check
        from apps.core.lifecycle import StaffRemoved, StudentDropped, describe, subscribe

        subscribe(StudentDropped, lifecycle.on_student_dropped)
        subscribe(StaffRemoved, handback.on_staff_removed)
        describe(StaffRemoved, handback.preview)
        register_check(
            "no ungraded answer, second grading or written question is held by someone off staff",
            handback.unfinished_work_of_non_staff,
        )
        register_check(
            "no open regrade request belongs to a dropped student",
            lifecycle.open_requests_of_dropped_students,
        )
        register_jobs("autograder", jobs.listed, jobs.took)

        register_nav(
            NavItem(
                "Questions",
                "autograder:sets",
                order=50,
                section="coursework",
                staff_section="grading",
            )
        )
        register_nav(
            NavItem("Regrades", "autograder:regrades", roles=STAFF, order=51, section="grading")
        )

        from apps.autograder import today
        from apps.core.models import Role
        from apps.core.registry import TodaySource, register_today

        register_today(
            TodaySource(
                "autograder-student",
                today.for_student,
                roles=frozenset({Role.STUDENT}),
                reads=("autograder", "slackdays", "coursecalendar", "groups"),
            )
        )
        register_today(TodaySource("autograder-regrades", today.for_staff, roles=STAFF))
