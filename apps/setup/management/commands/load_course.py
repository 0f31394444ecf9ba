from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.coursefile import CourseFileError, parse_course_file
from apps.setup.course_loader import course_load


class Command(BaseCommand):
    help = (
        "Load or update a course from its YAML course file. The whole file is validated first; "
        "nothing is written if any key is wrong. Re-running updates in place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", type=Path, help="Path to the course file, e.g. courses/ee290-sp26.yaml"
        )
        parser.add_argument("--check", action="store_true", help="Validate only; write nothing.")

    def handle(self, *args: Any, file: Path, check: bool, **options: Any) -> None:
        try:
            text = file.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise CommandError(f"{file}: cannot read ({exc.strerror})") from None
        try:
            cf = parse_course_file(text)
        except CourseFileError as exc:
            for problem in exc.problems:
                self.stderr.write(f"{file}: {problem}")
            raise CommandError(
                f"{file}: {len(exc.problems)} problem(s); nothing was written."
            ) from None
        if check:
            self.stdout.write(self.style.SUCCESS(f"{file}: valid ({cf.course.code})."))
            return
        report = course_load(cf=cf)
        self.stdout.write(f"Course {report.course.code} — {report.course.title}")
        for line in report.lines():
            self.stdout.write("  " + line)
        self.stdout.write(
            self.style.SUCCESS(
                "Loaded." if report.changed else "Already up to date; nothing changed."
            )
        )
