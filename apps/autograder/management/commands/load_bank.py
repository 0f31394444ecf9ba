"""manage.py load_bank COURSE FILE… — check each question bank whole and load it (or refuse it,
naming every problem by question). Re-loading a bank updates its questions in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.autograder.bank import BankError, bank_load
from apps.core.models import Course


class Command(BaseCommand):
    help = "Check and load question banks (YAML) into a course; any problem refuses the bank."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="The course code, e.g. ee290-sp26.")
        parser.add_argument(
            "files", nargs="+", type=Path, help="Bank files (courses/banks/*.yaml)."
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        course = Course.objects.filter(code=opts["course"]).first()
        if course is None:
            raise CommandError(f"No course with the code {opts['course']!r}.")
        failed = 0
        for path in opts["files"]:
            if not path.is_file():
                self.stderr.write(f"{path}: no such file")
                failed += 1
                continue
            try:
                qs = bank_load(course=course, path=path)
            except BankError as exc:
                failed += 1
                self.stderr.write(f"{path}: refused, nothing loaded:")
                for p in exc.problems:
                    self.stderr.write(f"  - {p}")
                continue
            n = qs.questions.count()
            self.stdout.write(f"{path}: loaded {qs.key} ({n} questions)")
        if failed:
            raise CommandError(f"{failed} bank(s) refused; fix them and run again.")
