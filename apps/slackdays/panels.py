from __future__ import annotations

from typing import Any, cast

from django.http import HttpRequest
from django.utils import timezone

from apps.core.models import Course, Role, User
from apps.slackdays.selectors import student_slack_memo


def glance_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """Slack days left and the next deadline that counts for this student (effective: slack
    and exceptions applied), from the one place deadlines come from."""
    user = cast(User, request.user)  # the dashboard is behind login_required
    memo = request.__dict__.setdefault("_memo", {})  # shared by the panels of this page
    left, deadlines = student_slack_memo(memo, course=course, student=user)
    now = timezone.now()
    upcoming = [d for d in deadlines if d.effective > now]
    return {
        "left": left,
        "allowance": course.slack_days_allowance,
        "boxes": [i < left for i in range(course.slack_days_allowance)],
        "next": upcoming[0] if upcoming else None,
        "due_soon": bool(upcoming) and (upcoming[0].effective - now).days < 7,
    }
