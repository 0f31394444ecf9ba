"""Reads: the hardware a user may compute with (catalog + their courses' custom profiles)."""

from __future__ import annotations

from apps.core.models import User
from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.catalog import GPU
from apps.perfcalc.models import CustomGPU


def gpu_table(*, user: User) -> dict[str, GPU]:
    """Catalog GPUs first, then custom profiles of the user's active courses (1 query)."""
    table = dict(catalog.gpus())
    custom = CustomGPU.objects.select_related("course")
    if not user.is_superuser:
        custom = custom.filter(course__memberships__user=user, course__memberships__is_active=True)
    for c in custom:
        g = c.to_gpu()
        table[g.key] = g
    return table
