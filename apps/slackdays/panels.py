from __future__ import annotations

from typing import Any, cast

from django.http import HttpRequest

from apps.core.models import Course, Role, User
from apps.slackdays.selectors import student_slack_memo


def glance_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """Slack days left; the deadlines themselves (effective: slack and exceptions applied) are
    Today's own list, so this panel does not repeat the next one."""
    user = cast(User, request.user)  # the dashboard is behind login_required
    memo = request.__dict__.setdefault("_memo", {})  # shared by the panels of this page
    left, _ = student_slack_memo(memo, course=course, student=user)
    return {
        "left": left,
        "allowance": course.slack_days_allowance,
        "boxes": [i < left for i in range(course.slack_days_allowance)],
    }
