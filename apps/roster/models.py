"""An uploaded class list, kept from preview to commit (and afterwards, for the record)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class RosterImport(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="roster_imports")
    filename = models.CharField(max_length=200)
    content = models.BinaryField(help_text="The file as uploaded.")
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    committed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    summary = models.JSONField(default=dict, blank=True, help_text="Counts written at commit.")

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.filename} ({self.created_at:%Y-%m-%d %H:%M})"
