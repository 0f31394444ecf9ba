from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.test.utils import override_settings

from apps.core.models import AuditEvent, Course
from apps.core.services import audit_record
from apps.setup.demo import DEMO_PASSWORD, demo_load, demo_logins
from apps.setup.demo_term import demo_activity
from apps.setup.liveterm import WEEK, move_term, weeks_to_today

# Written once the demo's people and their term have been played in: a later `load_demo` (the
# second `make run`) then leaves the database as its users left it.
PLAYED = "demo.played"


class Command(BaseCommand):
    help = (
        "Add demo people to a loaded course: 1 instructor, 2 TAs, 40 students in 8 groups of 5. "
        "Every demo account is marked as demo and uses the password printed at the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="Course code, e.g. ee290-sp26")
        parser.add_argument(
            "--keep-dates",
            action="store_true",
            help="Keep the course file's own dates instead of moving the term so that today is "
            "in its seventh week (the default, so a first look shows a live term).",
        )
        parser.add_argument(
            "--allow-production",
            action="store_true",
            help="Load demo accounts even though DEBUG is off (they share a known password).",
        )

    def handle(
        self, *args: Any, course: str, allow_production: bool, keep_dates: bool, **options: Any
    ) -> None:
        if not settings.DEBUG and not allow_production:
            raise CommandError(
                "DEBUG is off: demo accounts share a published password. "
                "Pass --allow-production if you really want them here."
            )
        obj = Course.objects.filter(code=course).first()
        if obj is None:
            raise CommandError(f"No course {course!r}; run load_course with its file first.")
        if AuditEvent.objects.filter(course=obj, action=PLAYED).exists():
            # A used demo (a second `make run`): what people did since stays as it is.
            self.stdout.write(
                f"The demo of {obj.code} is already loaded; nothing changed (its dates, people "
                "and everything done since stay as they are)."
            )
            logins = demo_logins(course=obj)
        else:
            if not keep_dates and obj.calendar_shift_days == 0:
                weeks = weeks_to_today(obj)
                if weeks:
                    move_term(obj, weeks)
                    self.stdout.write(
                        f"Moved {obj.code}'s dates by {weeks} weeks so that today is in week "
                        f"{WEEK} (the demo database only; the course file keeps its own dates)."
                    )
            # The demo's activity e-mails its made-up people (scribe duties, review pairs): keep
            # them out of the console, where they would bury the logins printed below.
            with override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"):
                logins = demo_load(course=obj)
                demo_activity(course=obj)
            with transaction.atomic():
                audit_record(actor=None, action=PLAYED, course=obj, obj=obj)
        by_role: dict[str, list[str]] = {}
        for login in logins:
            by_role.setdefault(login.role, []).append(login.email)
        self.stdout.write("")
        self.stdout.write(self.style.WARNING("Demo logins (DEMO accounts, not real people):"))
        for role, emails in by_role.items():
            shown = emails if len(emails) <= 3 else [emails[0], "…", emails[-1]]
            self.stdout.write(f"  {role:<10} {'  '.join(shown)}  ({len(emails)})")
        self.stdout.write(f"  password   {DEMO_PASSWORD}   (the same for every demo account)")
        self.stdout.write("  admin      /admin/ as instructor@example.edu (course data only)")
        self.stdout.write("")
