"""Impact evidence rules, pure."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def url_problem(url: str) -> str | None:
    """Why `url` is not a link to public evidence, or None. Checked for form only: the server
    never fetches it (no request to a user-given address, so nothing to exploit)."""
    url = url.strip()
    if not url:
        return "Give the link to the evidence."
    if len(url) > 500:
        return "The link is longer than 500 characters."
    if any(c.isspace() for c in url):
        return "A link has no spaces."
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "The link must start with https:// (or http://)."
    host = parts.hostname or ""
    if not host:
        return "The link has no host name."
    try:
        ipaddress.ip_address(host)
        return "Use the page's public address, not an IP address."
    except ValueError:
        pass
    if (
        "." not in host
        or host.endswith((".local", ".internal", ".localhost"))
        or host == "localhost"
    ):
        return f"{host} is not a public host name."
    return None
