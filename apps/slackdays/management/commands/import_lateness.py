from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.calendar.models import Assignment
from apps.core.errors import DomainError
from apps.core.models import Course, Membership, Role
from apps.slackdays.lateness import lateness_run, lateness_upload


class Command(BaseCommand):
    help = (
        "Preview a Gradescope assignment export against slack days; "
        "with --commit, apply it (all or nothing)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course")
        parser.add_argument("assignment", help="Assignment code, e.g. A3")
        parser.add_argument("file", type=Path)
        parser.add_argument("--commit", action="store_true")

    def handle(
        self, *args: Any, course: str, assignment: str, file: Path, commit: bool, **options: Any
    ) -> None:
        c = Course.objects.filter(code=course).first()
        if c is None:
            raise CommandError(f"No course {course!r}.")
        a = Assignment.objects.filter(course=c, code__iexact=assignment).first()
        if a is None:
            raise CommandError(f"No assignment {assignment!r} in {course}.")
        staff = (
            Membership.objects.filter(course=c, role=Role.INSTRUCTOR, is_active=True)
            .select_related("user")
            .first()
        )
        if staff is None:
            raise CommandError("The course has no instructor to import as.")
        try:
            record = lateness_upload(
                actor=staff.user,
                course=c,
                assignment_id=a.pk,
                filename=file.name,
                data=file.read_bytes(),
            )
            report = lateness_run(actor=staff.user, record=record, commit=False)
        except OSError as exc:
            raise CommandError(f"{file}: cannot read ({exc.strerror})") from None
        for o in report.outcomes:
            self.stdout.write(f"  row {o.row:<4} {o.student:<30} {o.result:<18} {o.detail}")
        for p in report.problems:
            self.stderr.write(f"{file}: {p}")
        self.stdout.write(str(report.summary()))
        if report.problems:
            raise CommandError(f"{len(report.problems)} problem(s); nothing was changed.")
        if not commit:
            self.stdout.write(self.style.WARNING("Preview only: run again with --commit to apply."))
            return
        try:
            lateness_run(actor=staff.user, record=record, commit=True)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS("Committed."))
