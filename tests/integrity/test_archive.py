"""The archive reader alone (no database): whatever the bytes, it returns checked members or
refuses with a message that says nothing was stored — never another exception."""

from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.integrity import archive, intake
from apps.integrity.archive import ArchiveRefused, path_problem, read_zip


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in files.items():
            z.writestr(name, body)
    return buf.getvalue()


def _read_or_refuse(data: bytes) -> None:
    """Contents, or a refusal with a message; any other exception fails the test."""
    message = "read"
    try:
        intake.contents(read_zip(data))
    except ArchiveRefused as exc:
        message = exc.message
    assert message


def test_path_rules() -> None:
    assert path_problem("a/b.py") is None
    assert path_problem("a/..b.py") is None
    assert "outside" in (path_problem("a/../../b.py") or "")
    assert "outside" in (path_problem("..\\evil.py") or "")
    assert "absolute" in (path_problem("/etc/passwd") or "")
    assert "absolute" in (path_problem("C:/Windows/x.py") or "")


def test_a_member_that_lies_about_its_size_is_caught_while_reading(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    data = _zip({"a/x.py": b"x" * 5000, "b/y.py": b"y"})
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 3000)  # declared sizes pass one by one
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 10_000)
    with pytest.raises(ArchiveRefused, match="Nothing was stored"):
        read_zip(data)


def test_a_zip_of_group_zips_is_read_one_level_deep() -> None:
    inner = _zip({"train.py": b"x = 1\n"})
    members = read_zip(_zip({"Alpha.zip": inner, "Bravo/train.py": b"y = 2\n"}))
    assert sorted(m.path for m in members) == ["Alpha/train.py", "Bravo/train.py"]
    deeper = _zip({"Alpha.zip": _zip({"inner.zip": inner})})
    assert [m.path for m in read_zip(deeper)] == ["Alpha/inner.zip"]  # kept as a file, unread


def test_gradescope_metadata_with_ruby_tags_is_read() -> None:
    meta = b""":submission_1:
  :submitters:
  - :email: a@uni.edu
    :sid: 7
  :score: !ruby/object:BigDecimal 18:0.9E1
"""
    people = intake.parse_metadata(meta.replace(b":submission_1:", b"submission_1:"))
    assert people == {"submission_1": [{"email": "a@uni.edu", "sid": "7", "name": ""}]}


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_never_crash_the_reader(data: bytes) -> None:
    _read_or_refuse(data)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.binary(min_size=1, max_size=8))
def test_a_mangled_zip_never_crashes_the_reader(at: int, junk: bytes) -> None:
    good = _zip({"Alpha/a.py": b"def f(x):\n    return x\n" * 30, "Bravo/b.md": b"# Report\n" * 30})
    at %= len(good)
    bad = good[:at] + junk + good[at + len(junk) :]
    _read_or_refuse(bad)
