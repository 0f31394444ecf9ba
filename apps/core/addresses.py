"""Where a request comes from: the client's address, read through the proxies the deployment
says it has.

Behind nginx (deploy/nginx/courseops.conf) every request reaches gunicorn from the proxy's own
address, so `REMOTE_ADDR` is 127.0.0.1 for everyone: a lock-out by address would lock the whole
campus at once, and a `/metrics` allowed by address would be open to the world. Each proxy
appends the address it saw to `X-Forwarded-For` (nginx: `$proxy_add_x_forwarded_for`), so with
`AXES_PROXY_COUNT` = N trusted proxies in front the client is the N-th entry from the right.
Entries further left were written by the client itself and are never believed; without the
setting the header is ignored entirely (a client could forge it). The log-in lock-out
(django-axes, `AXES_CLIENT_IP_CALLABLE`), every other door (apps/core/doors.py) and `/metrics`
(apps/core/ops.py) all read the address here, so they agree.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's address: `REMOTE_ADDR`, or behind `AXES_PROXY_COUNT` trusted proxies the
    address the outermost of them saw. A request that carries fewer forwarded hops than there
    are proxies did not come through them: its socket address is the one that counts."""
    remote = str(request.META.get("REMOTE_ADDR", "") or "")
    proxies = int(getattr(settings, "AXES_IPWARE_PROXY_COUNT", None) or 0)
    if proxies <= 0:
        return remote
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [h for h in hops if h]
    if len(hops) < proxies:
        return remote
    candidate = hops[-proxies]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def address_in(address: str, networks: Iterable[str]) -> bool:
    """`address` lies in one of `networks` (`10.0.0.0/8`, `192.0.2.7`, `::1`); a malformed
    entry or address matches nothing."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for network in networks:
        try:
            if ip in ipaddress.ip_network(network.strip(), strict=False):
                return True
        except ValueError:
            continue
    return False
