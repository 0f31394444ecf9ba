"""The one CSV writer every export uses: cells that a spreadsheet would run as a formula are
neutralised (OWASP "CSV injection"), and whole exports stream instead of being built in memory.

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with a single
quote, so Excel, Sheets and LibreOffice show it as text. A plain number (`-2`, `+1.5e3`) is left
alone: it cannot be a formula, and imports of scores and balances need it numeric.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """The value as a spreadsheet will read it harmlessly."""
    if not isinstance(value, str) or not value.startswith(FORMULA_TRIGGERS):
        return value
    if _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


class SafeWriter:
    """`csv.writer` with every cell passed through `safe_cell`."""

    def __init__(self, stream: Any) -> None:
        self._writer = csv.writer(stream)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([safe_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_stream(rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """Each row as one CSV line, neutralised, produced as it is read (no list in memory)."""
    writer = SafeWriter(_Echo())
    for row in rows:
        yield writer.writerow(row)


def csv_response(filename: str, rows: Iterable[Iterable[Any]]) -> StreamingHttpResponse:
    """A download of `rows` (the header first), streamed."""
    response = StreamingHttpResponse(csv_stream(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
