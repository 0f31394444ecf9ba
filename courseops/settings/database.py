"""DATABASE_URL → Django's DATABASES entry, with libpq's multi-host form.

A PostgreSQL that fails over by moving its primary (a streaming replica promoted; Cloud SQL HA,
RDS Multi-AZ behind a fixed name) is reached by giving every host and letting libpq pick the one
that takes writes:

    postgres://courseops@db1:5432,db2:5432/courseops?target_session_attrs=read-write&connect_timeout=5

dj-database-url refuses a host list (its URL parser wants one port), so the hosts are taken out
here and handed to psycopg as libpq's comma-separated `host` and `port`; every query parameter
(target_session_attrs, connect_timeout, sslmode, …) reaches psycopg through OPTIONS as before.
A URL with one host is parsed by dj-database-url unchanged. Imports nothing of Django.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import dj_database_url


def _host_port(item: str, url: str) -> tuple[str, str]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` → (host, port); port "" when left out."""
    if item.startswith("["):
        host, _, rest = item[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = item.partition(":")
    if not host or (port and not port.isdigit()):
        raise ValueError(f"DATABASE_URL: {item!r} is not host or host:port (in {url!r})")
    return host, port


def parse_database_url(url: str, **kwargs: Any) -> dj_database_url.DBConfig:
    """dj_database_url.parse, plus `h1:p1,h2:p2` as libpq's host and port lists."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if "," not in hosts:
        return dj_database_url.parse(url, **kwargs)
    pairs = [_host_port(item, url) for item in hosts.split(",")]
    first = urlunsplit(parts._replace(netloc=f"{userinfo}{at}placeholder"))
    config = dj_database_url.parse(first, **kwargs)
    if not config["ENGINE"].endswith("postgresql"):
        raise ValueError(f"DATABASE_URL: a host list needs PostgreSQL, not {parts.scheme!r}")
    config["HOST"] = ",".join(h for h, _ in pairs)
    # libpq takes one port for all hosts or one per host; an empty one is its default, 5432.
    ports = [p for _, p in pairs]
    config["PORT"] = ",".join(ports) if any(ports) else ""
    return config
