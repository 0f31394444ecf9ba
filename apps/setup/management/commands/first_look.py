"""`make run` in one process: check, migrate, load the course file and the demo, then serve.

Four `manage.py` processes each paid Django's start-up (seconds on a 2-core machine); one process
pays it once, and the autoreloader's child (RUN_MAIN=true) only serves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.coursefile import CourseFileError, parse_course_file


class Command(BaseCommand):
    help = (
        "What `make run` does: check, migrate, load the course file and its demo people (moved "
        "so that today is in week 7; a used demo is left as it is), then serve with --serve."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", type=Path, help="Path to the course file, e.g. courses/ee290-sp26.yaml"
        )
        parser.add_argument(
            "--serve",
            metavar="HOST:PORT",
            default="",
            help="Then run the development server there, e.g. 127.0.0.1:8000 (off by default).",
        )

    def handle(self, *args: Any, file: Path, serve: str, **options: Any) -> None:
        if os.environ.get("RUN_MAIN") != "true":  # the autoreloader's child only serves
            try:
                code = parse_course_file(file.read_text(encoding="utf-8-sig")).course.code
            except OSError as exc:
                raise CommandError(f"{file}: cannot read ({exc.strerror})") from None
            except CourseFileError as exc:
                raise CommandError(f"{file}: " + "; ".join(exc.problems)) from None
            for step in (["check"], ["migrate", "--no-input"], ["load_course", str(file)]):
                self.stdout.write(f"== manage.py {' '.join(step)}")
                call_command(*step, stdout=self.stdout, stderr=self.stderr)
            self.stdout.write(f"== manage.py load_demo {code}")
            call_command("load_demo", code, stdout=self.stdout, stderr=self.stderr)
        if serve:
            if os.environ.get("RUN_MAIN") != "true":
                self.stdout.write(
                    f"== serving http://{serve}/ with Django's development server, for a first "
                    "look (production runs gunicorn: see the Operators guide); Ctrl-C stops it"
                )
            # Said once above in our words; Django's own banner would print it as a WARNING.
            os.environ["DJANGO_RUNSERVER_HIDE_WARNING"] = "true"
            call_command("runserver", serve, skip_checks=True)
