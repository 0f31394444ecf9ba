"""Impact evidence rules, pure."""

from __future__ import annotations

from apps.core.links import link_problem


def url_problem(url: str) -> str | None:
    """Why `url` is not a link to public evidence, or None (`apps.core.links`)."""
    return link_problem(url, missing="Give the link to the evidence.")
