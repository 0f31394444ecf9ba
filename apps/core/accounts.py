"""The course check that each mailbox has one account (see `apps.core.emails`)."""

from __future__ import annotations

from apps.core.emails import canonical_email, near_duplicates
from apps.core.models import Membership, User


def one_account_per_email(course_id: int) -> list[str]:
    """No member's mailbox is held by a second account under another spelling (left so by
    migration 0012, or made by hand in the database)."""
    mine = {
        canonical_email(e)
        for e in Membership.objects.filter(course_id=course_id).values_list(
            "user__email", flat=True
        )
    }
    found = near_duplicates(list(User.objects.values_list("pk", "email")))
    return [
        f"Accounts {', '.join(f'#{pk} {email!r}' for pk, email in group)} are one mailbox "
        f"({canonical_email(group[0][1])}): merge or correct them in the admin."
        for group in found
        if canonical_email(group[0][1]) in mine
    ]
