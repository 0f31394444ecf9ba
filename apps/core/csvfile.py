"""The one CSV reader every intake uses (roster, lateness, answers, gradebook, participation,
assessments): bytes in, a header and numbered rows out, or `CsvRefused` naming what is wrong.

It takes what spreadsheets and LMSs really export: UTF-8 with or without a BOM, UTF-16 (Excel's
"Unicode text"), Windows-1252 as a fallback (said out loud), any newline convention (`\\r\\n`,
`\\n`, and the bare `\\r` of old Mac exports), and `,` `;` tab or `|` as the delimiter. It refuses
a file that is empty, over the size cap, binary, without a header or malformed, and nothing
else ever escapes it: `tests/core/test_csvfile.py` feeds it arbitrary bytes.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field

from apps.core.errors import DomainError

MAX_BYTES = 5_000_000
MAX_ROWS = 100_000
MAX_FIELD = 1_000_000  # characters in one cell (csv's own limit is 131,072)
DELIMITERS = ",;\t|"
csv.field_size_limit(MAX_FIELD)  # process-wide; set once here rather than around each read


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an uploaded file, where a person can find it."""

    row: int | None  # None: the whole file
    column: str | None
    message: str

    def __str__(self) -> str:
        where = "file" if self.row is None else f"row {self.row}"
        if self.column:
            where += f", column {self.column!r}"
        return f"{where}: {self.message}"


class CsvRefused(Exception):
    """The whole file is refused; `str()` is the line a preview shows ('file: …' or 'row n: …')."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__(message)
        self.message, self.row = message, row

    def __str__(self) -> str:
        return str(self.problem)

    @property
    def problem(self) -> Problem:
        return Problem(self.row, None, self.message)


@dataclass
class Table:
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (row number as a spreadsheet shows it, cells)
    encoding: str
    delimiter: str
    notes: list[str] = field(default_factory=list)

    def records(self) -> list[tuple[int, dict[str, str]]]:
        """Each row as {header: cell}; missing cells are empty, extra cells are dropped."""
        width = len(self.header)
        return [
            (n, dict(zip(self.header, cells + [""] * width, strict=False)))
            for n, cells in self.rows
        ]


def decode(data: bytes) -> tuple[str, str]:
    """Text and the encoding used: a BOM decides (UTF-8, UTF-16); then UTF-8; then
    Windows-1252, which reads any byte."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "UTF-16"
        except UnicodeDecodeError:
            raise CsvRefused(
                "the file says it is UTF-16 but is not; save it as CSV UTF-8"
            ) from None
    try:
        return data.decode("utf-8-sig"), "UTF-8"
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace"), "Windows-1252"


def looks_binary(data: bytes) -> bool:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in data[:65536]


def sniff_delimiter(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        first = sample.split("\n", 1)[0]
        return max(DELIMITERS, key=first.count) if first.strip() else ","


def read_csv(data: bytes, *, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS) -> Table:
    """The file as a header and its non-blank rows, or CsvRefused with the first reason."""
    if len(data) > max_bytes:
        raise CsvRefused(
            f"the file is {len(data) / 1e6:,.1f} MB; the most is {max_bytes / 1e6:,.0f} MB"
        )
    if not data.strip():
        raise CsvRefused("the file is empty")
    if looks_binary(data):
        raise CsvRefused("this is not a text file; export the sheet as CSV")
    text, encoding = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        raise CsvRefused("this is not a text file; export the sheet as CSV")
    delimiter = sniff_delimiter(text[:8192])
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
    rows: list[tuple[int, list[str]]] = []
    header: list[str] | None = None
    n = 0  # the record's number as a spreadsheet shows it (blank rows count)
    try:
        for n, cells in enumerate(reader, start=1):
            if header is None:
                if any(c.strip() for c in cells):
                    header = [c.strip() for c in cells]
                continue
            if any(c.strip() for c in cells):
                rows.append((n, cells))
                if len(rows) > max_rows:
                    raise CsvRefused(f"the file has more than {max_rows:,} rows")
    except csv.Error as exc:
        raise CsvRefused(f"the file cannot be read as CSV ({exc})", row=n + 1) from None
    if header is None:
        raise CsvRefused("no header row")
    notes = []
    if encoding == "Windows-1252":
        notes.append("The file is not UTF-8; it was read as Windows-1252 (check accented names).")
    return Table(header, rows, encoding, delimiter, notes)


def refuse_unreadable(data: bytes, *, max_bytes: int = MAX_BYTES) -> Table:
    """For an upload before it is stored: the table, or DomainError (400, field `file`) when the
    file as a whole cannot be read, so a refused file leaves nothing behind."""
    try:
        return read_csv(data, max_bytes=max_bytes)
    except CsvRefused as exc:
        raise DomainError(f"The file cannot be used: {exc.message}.", field="file") from None
