"""`manage.py check_course <code>`: run every registered invariant of a course, print each
violation with the objects named, exit 1 if there is any."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.core.invariants import checks, run_checks
from apps.core.models import Course


class Command(BaseCommand):
    help = "Check a course's invariants (every app's); exit 1 when any is violated."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("code", help="The course code, e.g. ee290-sp26.")

    def handle(self, *args: Any, **options: Any) -> None:
        course = Course.objects.filter(code=options["code"]).first()
        if course is None:
            raise CommandError(f"No course with the code {options['code']!r}.")
        found = run_checks(course.pk)
        for v in found:
            self.stdout.write(f"VIOLATION  {v.check}: {v.detail}")
        n = len(checks())
        self.stdout.write(f"{course.code}: {n} checks, {len(found)} violations")
        if found:
            raise SystemExit(1)
