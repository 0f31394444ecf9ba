"""The client's address behind the proxies a deployment declares (apps/core/addresses.py): the
one the lock-out, every door and /metrics count. The whole path through Debian's nginx is in
tests/test_behind_nginx.py; here, each rule on its own."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from apps.core.addresses import address_in, client_address


def _request(remote: str = "127.0.0.1", forwarded: str | None = None):  # type: ignore[no-untyped-def]
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


def test_without_a_declared_proxy_the_header_is_ignored(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AXES_IPWARE_PROXY_COUNT = None
    assert client_address(_request("192.0.2.9", "203.0.113.5")) == "192.0.2.9"


@pytest.mark.parametrize(
    ("proxies", "forwarded", "client"),
    [
        (1, "203.0.113.5", "203.0.113.5"),  # nginx appended what it saw
        (1, "10.9.9.9, 203.0.113.5", "203.0.113.5"),  # the client's own entry is not believed
        (2, "203.0.113.5, 198.51.100.2", "203.0.113.5"),  # a load balancer, then nginx
        (2, "198.51.100.2", "127.0.0.1"),  # fewer hops than proxies: it did not come through
        (1, "", "127.0.0.1"),
        (1, "not-an-address", "127.0.0.1"),
        (1, "2001:db8::7", "2001:db8::7"),
    ],
)
def test_behind_n_proxies_the_nth_entry_from_the_right_is_the_client(  # type: ignore[no-untyped-def]
    settings, proxies: int, forwarded: str, client: str
) -> None:
    settings.AXES_IPWARE_PROXY_COUNT = proxies
    assert client_address(_request("127.0.0.1", forwarded)) == client


def test_the_lock_out_reads_the_same_address(settings) -> None:  # type: ignore[no-untyped-def]
    """django-axes would otherwise ask django-ipware, which is not installed, and fall back to
    the socket's address: the proxy's, for everyone."""
    from axes.helpers import get_client_ip_address

    settings.AXES_IPWARE_PROXY_COUNT = 1
    assert get_client_ip_address(_request("127.0.0.1", "203.0.113.5")) == "203.0.113.5"


def test_address_in_networks() -> None:
    assert address_in("10.20.0.5", ["10.20.0.0/16"])
    assert address_in("127.0.0.3", ["127.0.0.3"])
    assert not address_in("127.0.0.4", ["127.0.0.3/32", "bogus"])
    assert not address_in("", ["0.0.0.0/0"])
