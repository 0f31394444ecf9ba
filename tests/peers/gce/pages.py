"""Pagination as Compute Engine's list and aggregatedList methods do it.

https://cloud.google.com/compute/docs/reference/rest/v1/instances/list (the same parameters on
every list): `maxResults` — "the maximum number of results per page … Acceptable values are 0
to 500, inclusive. (Default: 500)"; when more results remain the response carries
`nextPageToken`, which the next request passes back as `pageToken`.
aggregatedList (https://cloud.google.com/compute/docs/reference/rest/v1/instances/aggregatedList)
pages over every scope's items the same way, its page keyed by scope.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.peers.gce.validate import Fail

MAX_RESULTS = 500


def _bounds(query: dict[str, list[str]], total: int) -> tuple[int, int]:
    raw = query.get("maxResults", [str(MAX_RESULTS)])[0]
    try:
        size = int(raw)
    except ValueError:
        raise Fail(400, f"Invalid value for field 'maxResults': '{raw}'.", "invalid") from None
    if not 0 <= size <= MAX_RESULTS:
        raise Fail(
            400,
            f"Invalid value for field 'maxResults': '{raw}'. Must be between 0 and "
            f"{MAX_RESULTS}, inclusive.",
            "invalid",
        )
    token = query.get("pageToken", [""])[0]
    start = 0
    if token:
        try:
            start = int(base64.urlsafe_b64decode(token.encode()).decode().removeprefix("o:"))
        except ValueError:
            raise Fail(400, f"Invalid value for field 'pageToken': '{token}'.", "invalid") from None
        if not 0 <= start <= total:
            raise Fail(400, f"Invalid value for field 'pageToken': '{token}'.", "invalid")
    return start, (size or MAX_RESULTS)


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def page(kind: str, items: list[Any], query: dict[str, list[str]]) -> dict[str, Any]:
    """One page of a plain list (`items`, `nextPageToken` while more remain)."""
    start, size = _bounds(query, len(items))
    out: dict[str, Any] = {"kind": kind, "items": items[start : start + size]}
    if start + size < len(items):
        out["nextPageToken"] = _token(start + size)
    return out


def aggregated_page(
    kind: str, key: str, scoped: list[tuple[str, Any]], query: dict[str, list[str]]
) -> dict[str, Any]:
    """One page of an aggregatedList: (scope, item) pairs, grouped by scope on the page."""
    start, size = _bounds(query, len(scoped))
    items: dict[str, Any] = {}
    for scope, item in scoped[start : start + size]:
        items.setdefault(scope, {key: []})[key].append(item)
    out: dict[str, Any] = {"kind": kind, "items": items}
    if start + size < len(scoped):
        out["nextPageToken"] = _token(start + size)
    return out
