"""What moving a deadline does to people, shown to staff before they confirm.

The app that owns a deadline (slack days for assignments, milestones for milestones) computes
a `MoveImpact`; the calendar shows it with one template and e-mails the people in it once the
move is confirmed (`deadline_moved_notify`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from apps.core.models import Course
from apps.core.queue import enqueue_on_commit


@dataclass(frozen=True)
class PersonMove:
    user_id: int
    name: str
    email: str
    old: dt.datetime
    new: dt.datetime
    note: str = ""  # e.g. "slack day now moot", "extension +48 h"


@dataclass
class MoveImpact:
    what: str  # "A3 Post-Training Assignment"
    old_due: dt.datetime
    new_due: dt.datetime
    people: list[PersonMove] = field(default_factory=list)
    moot: list[PersonMove] = field(default_factory=list)  # slack spent that the move makes moot
    groups: int = 0

    @property
    def shift(self) -> dt.timedelta:
        return self.new_due - self.old_due

    @property
    def shift_text(self) -> str:
        """'2 days later', '5 h earlier', '1 day 3 h later'."""
        seconds = int(self.shift.total_seconds())
        days, rest = divmod(abs(seconds), 86400)
        hours, rest = divmod(rest, 3600)
        minutes = rest // 60
        parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
        parts += [f"{hours} h"] if hours else []
        parts += [f"{minutes} min"] if minutes else []
        return f"{' '.join(parts) or 'no change'} {'later' if seconds > 0 else 'earlier'}"

    @property
    def count(self) -> int:
        return len(self.people)

    @property
    def special(self) -> list[PersonMove]:
        """People whose deadline is not simply the new base (exceptions, slack, extensions)."""
        return [p for p in self.people if p.note]

    def as_dict(self) -> dict[str, object]:
        """The shape of the API's ImpactSerializer."""
        return {
            "what": self.what,
            "old_due": self.old_due,
            "new_due": self.new_due,
            "people": self.count,
            "groups": self.groups,
            "special": [
                {"email": p.email, "old": p.old, "new": p.new, "note": p.note} for p in self.special
            ],
            "moot_slack": [p.email for p in self.moot],
        }


def deadline_moved_notify(*, course: Course, impact: MoveImpact, path: str) -> None:
    """Queue one e-mail per affected person, after the move commits (a notification: a broker
    outage is logged, the move stands)."""
    from apps.calendar.tasks import email_deadline_moved

    rows = [[p.user_id, p.new.isoformat(), p.note] for p in impact.people]
    if not rows:
        return
    enqueue_on_commit(
        lambda: email_deadline_moved.delay(
            course.pk, impact.what, impact.old_due.isoformat(), rows, path
        ),
        what="the e-mails about the moved deadline",
        critical=False,
    )
