"""`manage.py compute_preflight <code>`: read the course's GCP project and say what would stop
the term — missing permissions, GPU and address quotas too low for the course's nodes, OS Login
on or enforced by the organisation policy compute.requireOsLogin while the course runs on
ssh-keys, a firewall rule that opens every node to every group, instances and addresses the board
expects but the project lacks (or the reverse). Read-only. Exit 0 when clean, 1 with findings
(a check that could not be made is one)."""

from __future__ import annotations

import textwrap
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.compute.cloud import preflight
from apps.core.models import Course

CHECK_W, STATUS_W, TEXT_W = 36, 16, 96


class Command(BaseCommand):
    help = "Check the course's GCP project before term (read-only); exit 1 with findings."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("code", help="The course code, e.g. ee290-sp26.")

    def handle(self, *args: Any, **options: Any) -> None:
        course = Course.objects.filter(code=options["code"]).first()
        if course is None:
            raise CommandError(f"No course with the code {options['code']!r}.")
        report = preflight.run(course)
        pad = " " * (CHECK_W + STATUS_W)
        self.stdout.write(f"{'check':<{CHECK_W}}{'status':<{STATUS_W}}finding / fix")
        for row in report.rows:
            lines = textwrap.wrap(row.finding, TEXT_W) or [""]
            if row.fix:
                lines += textwrap.wrap(f"fix: {row.fix}", TEXT_W)
            self.stdout.write(f"{row.check:<{CHECK_W}}{row.status:<{STATUS_W}}{lines[0]}")
            for line in lines[1:]:
                self.stdout.write(f"{pad}{line}")
        n = len(report.findings)
        self.stdout.write(
            f"{course.code}: project {report.project or '(none)'}, {len(report.rows)} rows, "
            f"{n} finding(s)"
        )
        if report.exit_code:
            raise SystemExit(report.exit_code)
