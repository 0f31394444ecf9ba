"""pylti1p3's registration models as an app whose ids match its shipped migrations (AutoField):
the project's BigAutoField default would otherwise ask for a migration inside the library."""

from __future__ import annotations

from pylti1p3.contrib.django.lti1p3_tool_config.apps import PyLTI1p3ToolConfig


class ToolConfig(PyLTI1p3ToolConfig):
    default_auto_field = "django.db.models.AutoField"
