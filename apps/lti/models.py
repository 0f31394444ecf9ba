"""An LMS course linked to a courseops course, and the launches already used.

The platform registrations and the tool's key pair are pylti1p3's own models
(`lti1p3_tool_config`: LtiTool, LtiToolKey). One courseops course may be linked to several LMS
courses (sections), each link its own row; a launch's nonce is recorded once, so a replayed
id_token is refused by the database."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class LtiLink(models.Model):
    tool = models.ForeignKey(
        "lti1p3_tool_config.LtiTool", on_delete=models.CASCADE, related_name="+"
    )
    deployment_id = models.CharField(max_length=255)
    context_id = models.CharField(max_length=255, help_text="The LMS course's id.")
    context_title = models.CharField(max_length=255, blank=True)
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lti_links")
    linked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    linked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("course_id", "context_title")
        constraints = [
            models.UniqueConstraint(
                fields=["tool", "deployment_id", "context_id"], name="lti_link_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.context_title or self.context_id} → {self.course_id}"


class LtiNonce(models.Model):
    issuer = models.CharField(max_length=255)
    nonce = models.CharField(max_length=255)
    used_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "nonce"], name="lti_nonce_once")]

    def __str__(self) -> str:
        return f"{self.issuer} {self.nonce}"
