"""Providers: the clouds courseops can drive, by name (`COMPUTE_PROVIDER`).

`dry-run` (the default, for `make run` and tests) keeps a stand-in project in the database;
`gcp` is the course's real project through `google-cloud-compute`. A system check verifies at
start-up that the configured name is one of these.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from apps.compute.cloud.providers.base import Provider

Factory = Callable[[int, str], Provider]


def _dry_run(course_id: int, project: str) -> Provider:
    from apps.compute.cloud.providers.dryrun import DryRun

    return DryRun(course_id)


def _gcp(course_id: int, project: str) -> Provider:
    from apps.compute.cloud.providers.gcp import Gcp

    return Gcp(project)


PROVIDERS: dict[str, Factory] = {"dry-run": _dry_run, "gcp": _gcp}


def provider_name() -> str:
    return str(settings.COMPUTE_PROVIDER)


def is_live() -> bool:
    """True when operations reach a real cloud (anything but the dry run)."""
    return provider_name() != "dry-run"


def provider_for(course_id: int, project: str) -> Provider:
    return PROVIDERS[provider_name()](course_id, project)
