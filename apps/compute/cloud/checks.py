"""Start-up check: the configured cloud provider is one courseops has."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from apps.core.checks import see


@register()
def compute_provider_known(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from apps.compute.cloud.providers import PROVIDERS

    name = settings.COMPUTE_PROVIDER
    if name in PROVIDERS:
        return []
    return [
        Error(
            f"COMPUTE_PROVIDER is {name!r}, which courseops does not have.",
            hint=see("courseops.E020", f"Use one of: {', '.join(sorted(PROVIDERS))}."),
            id="courseops.E020",
        )
    ]
