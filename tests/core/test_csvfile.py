"""The one CSV reader every intake uses: what spreadsheets export reads the same, what cannot be
read is refused with a reason, and no bytes at all make it raise anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.core.csvfile import CsvRefused, read_csv

TABLE = "email,score\nada@uni.edu,90\nbo@uni.edu,85\n"
EXPECTED = (["email", "score"], [(2, ["ada@uni.edu", "90"]), (3, ["bo@uni.edu", "85"])])


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("unix", TABLE.encode()),
        ("windows", TABLE.replace("\n", "\r\n").encode()),
        ("old mac (bare CR)", TABLE.replace("\n", "\r").encode()),
        ("BOM", b"\xef\xbb\xbf" + TABLE.encode()),
        ("UTF-16 LE", TABLE.encode("utf-16-le").join([b"\xff\xfe", b""])),
        ("UTF-16 BE", TABLE.encode("utf-16-be").join([b"\xfe\xff", b""])),
        ("semicolons", TABLE.replace(",", ";").encode()),
        ("tabs", TABLE.replace(",", "\t").encode()),
    ],
)
def test_every_spelling_of_one_table_reads_the_same(name: str, data: bytes) -> None:
    t = read_csv(data)
    assert (t.header, t.rows) == EXPECTED, name


def test_rows_are_numbered_as_a_spreadsheet_shows_them_blank_lines_included() -> None:
    t = read_csv(("\n\n" + TABLE.replace("\n", "\n\n")).encode())
    assert t.header == ["email", "score"]
    assert [n for n, _ in t.rows] == [5, 7]


def test_windows_1252_is_read_and_said() -> None:
    t = read_csv("name,email\nJosé,j@uni.edu\n".encode("cp1252"))
    assert t.rows == [(2, ["José", "j@uni.edu"])]
    assert t.encoding == "Windows-1252"
    assert "Windows-1252" in t.notes[0]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "file: the file is empty"),
        (b" \r\n\t", "file: the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "file: this is not a text file"),
        (b"a,b\n" + b"1,2\n" * 2_000_000, "file: the file is 8.0 MB; the most is 5 MB"),
        (b"\xff\xfe\x00\xd8", "file: the file says it is UTF-16 but is not"),
    ],
)
def test_what_cannot_be_read_is_refused_with_the_reason(data: bytes, says: str) -> None:
    with pytest.raises(CsvRefused) as exc:
        read_csv(data)
    assert str(exc.value).startswith(says)


def test_a_row_limit_names_itself() -> None:
    with pytest.raises(CsvRefused, match="more than 3 rows"):
        read_csv(b"a\n1\n2\n3\n4\n", max_rows=3)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=2000))
def test_no_bytes_make_the_reader_fail_any_other_way(data: bytes) -> None:
    try:
        t = read_csv(data)
    except CsvRefused as exc:
        said = str(exc)
    else:
        said = ""
    if said:
        assert said.startswith(("file:", "row "))
        return
    assert t.header  # a table always has its header …
    assert all(n >= 2 for n, _ in t.rows)  # … and rows numbered after it


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8),
            min_size=2,
            max_size=2,
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_any_text_table_survives_any_newline_convention(
    rows: list[list[str]], newline: str
) -> None:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator=newline, quoting=csv.QUOTE_ALL).writerows([["h1", "h2"], *rows])
    try:
        t = read_csv(buf.getvalue().encode())
    except CsvRefused:
        t = None
    if t is None:  # only a NUL in a cell makes a written table unreadable
        assert "\x00" in buf.getvalue()
        return
    assert t.header == ["h1", "h2"]
