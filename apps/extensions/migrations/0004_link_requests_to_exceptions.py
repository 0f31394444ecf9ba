"""Today's data under the relief rule: each approved request on an assignment points at the
extension its approval granted (until now only the exception's reason said "Extension request
#N"), and where members of one group have several open requests for the whole group on one
assignment, the oldest stays open and the others close saying why (one open group request per
group and assignment is a database constraint from 0005)."""

import re

from django.db import migrations
from django.utils import timezone

REQUEST = re.compile(r"^Extension request #(\d+):")


def forwards(apps, schema_editor):
    ExtensionRequest = apps.get_model("extensions", "ExtensionRequest")
    DeadlineException = apps.get_model("slackdays", "DeadlineException")
    linked = set(
        ExtensionRequest.objects.filter(exception__isnull=False).values_list(
            "exception_id", flat=True
        )
    )
    for e in DeadlineException.objects.filter(kind="extension", reason__startswith="Extension request #"):
        m = REQUEST.match(e.reason)
        if m is None or e.pk in linked:
            continue
        ExtensionRequest.objects.filter(
            pk=int(m.group(1)), status="approved", exception__isnull=True
        ).update(exception=e)
        linked.add(e.pk)
    seen = set()
    for r in ExtensionRequest.objects.filter(
        status="open", group__isnull=False, assignment__isnull=False
    ).order_by("created_at", "pk"):
        key = (r.group_id, r.assignment_id)
        if key in seen:
            r.status = "closed"
            r.comment = "Closed: your group already had an open request on this assignment."
            r.decided_at = timezone.now()
            r.save(update_fields=["status", "comment", "decided_at"])
        seen.add(key)


class Migration(migrations.Migration):
    dependencies = [
        ("extensions", "0003_extensionrequest_exception_and_more"),
        ("slackdays", "0004_deadlineexception_cap_days_confirmed"),
    ]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
