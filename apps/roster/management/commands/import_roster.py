from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import DomainError
from apps.core.models import Course, Membership, Role
from apps.roster.services import Preview, roster_commit, roster_upload


def print_preview(write: Any, preview: Preview, *, limit: int = 20) -> None:
    s = preview.summary()
    write(
        f"added {s['added']}, updated {s['updated']}, unchanged {s['unchanged']}, "
        f"dropped {s['dropped']}, problems {s['problems']}"
    )
    for note in preview.parsed.notes:
        write(f"  note: {note}")
    for label, items in (
        ("add", preview.added),
        ("update", preview.updated),
        ("drop", preview.dropped),
    ):
        for c in items[:limit]:
            write(f"  {label:<6} {c.email:<40} {c.role:<10} {c.what}")
        if len(items) > limit:
            write(f"  … and {len(items) - limit} more to {label}")


class Command(BaseCommand):
    help = (
        "Preview a roster CSV against a course; with --commit, apply it (all or nothing). "
        "Accepts name,email,sid,role files and Canvas/bCourses roster exports."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="Course code, e.g. ee290-sp26")
        parser.add_argument("file", type=Path, help="The CSV file")
        parser.add_argument(
            "--commit", action="store_true", help="Apply the changes after the preview."
        )
        parser.add_argument(
            "--as",
            dest="actor",
            help="Email of the staff member importing (default: the course's first instructor).",
        )

    def handle(
        self, *args: Any, course: str, file: Path, commit: bool, actor: str | None, **options: Any
    ) -> None:
        obj = Course.objects.filter(code=course).first()
        if obj is None:
            raise CommandError(f"No course {course!r}.")
        staff = Membership.objects.filter(
            course=obj, is_active=True, role__in=[Role.INSTRUCTOR, Role.TA]
        ).select_related("user")
        member = (
            staff.filter(user__email=actor.lower()).first()
            if actor
            else staff.filter(role=Role.INSTRUCTOR).first()
        )
        if member is None:
            raise CommandError(
                "No staff member to import as; pass --as EMAIL of an instructor or TA."
            )
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"{file}: cannot read ({exc.strerror})") from None
        try:
            record, preview = roster_upload(
                actor=member.user, course=obj, filename=file.name, data=data
            )
        except DomainError as exc:
            raise CommandError(f"{file}: {exc.message} Nothing was changed.") from None
        print_preview(self.stdout.write, preview)
        for p in preview.problems:
            self.stderr.write(f"{file}: {p}")
        if preview.problems:
            raise CommandError(f"{len(preview.problems)} problem(s); nothing was changed.")
        if not commit:
            self.stdout.write(self.style.WARNING("Preview only: run again with --commit to apply."))
            return
        try:
            roster_commit(actor=member.user, record=record)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            self.style.SUCCESS("Committed." if preview.changes else "Nothing to change.")
        )
