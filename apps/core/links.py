"""Links people give (evidence, a submission, scribe notes) are checked for form only: the server
never fetches them, so there is no request to a user-given address to exploit. What is refused is
what a reader could not open or should not click: another scheme (`javascript:` among them), a
host that is an IP address or a private name, spaces, more than 500 characters."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

MAX_LINK = 500  # the length of every link column


def link_problem(url: str, *, missing: str = "Give the link.") -> str | None:
    """Why `url` is not a public web link, or None; `missing` is said when it is empty."""
    url = url.strip()
    if not url:
        return missing
    if len(url) > MAX_LINK:
        return f"The link is longer than {MAX_LINK} characters."
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
