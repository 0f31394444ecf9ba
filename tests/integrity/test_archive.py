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


def _nested_bomb(inner_zips: int = 20, members: int = 4) -> bytes:
    """A zip of `inner_zips` zips, each of `members` files of 1 MiB of zeros: every member is
    at the per-member ratio floor, so only a limit on the whole upload catches it."""
    inner = _zip({f"m{j}.py": bytes(1024 * 1024) for j in range(members)})
    return _zip({f"g{i:02d}.zip": inner for i in range(inner_zips)})


def test_a_zip_of_zips_bomb_is_refused_at_the_real_limits() -> None:
    data = _nested_bomb()
    assert len(data) < 200_000  # ~90 KB uploaded, 80 MiB inside
    with pytest.raises(ArchiveRefused) as refused:
        read_zip(data, name="The submissions archive")
    message = refused.value.message
    assert "The submissions archive › g" in message  # names the file where it tipped over
    assert "zip bomb" in message
    assert "Nothing was stored." in message


def test_inner_zips_share_one_total_not_a_fresh_limit_each(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(archive, "MAX_RATIO", 10**9)  # only the total can catch it
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 6 * 1024 * 1024)  # each inner zip is 4 MiB
    with pytest.raises(ArchiveRefused) as refused:
        read_zip(_nested_bomb(), name="The submissions archive")
    assert "The submissions archive › g01.zip expands past 6 MiB as declared" in (
        refused.value.message
    )
    monkeypatch.setattr(archive, "MAX_FILES", 30)  # 20 inner zips of 4 files: 100 in all
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 10**12)
    with pytest.raises(ArchiveRefused, match=r"› g\d\d\.zip holds 3\d files"):
        read_zip(_nested_bomb(), name="The submissions archive")


def test_many_small_members_cannot_dodge_the_ratio() -> None:
    data = _zip({f"Alpha/f{i}.py": bytes(1024 * 1024) for i in range(30)})
    with pytest.raises(ArchiveRefused, match="more than 100 times the"):
        read_zip(data)


def test_gradescope_metadata_with_ruby_tags_is_read() -> None:
    meta = b""":submission_1:
  :submitters:
  - :email: a@uni.edu
    :sid: 7
  :score: !ruby/object:BigDecimal 18:0.9E1
"""
    people = intake.parse_metadata(meta.replace(b":submission_1:", b"submission_1:"))
    assert people == {"submission_1": [{"email": "a@uni.edu", "sid": "7", "name": ""}]}


def test_gradescope_metadata_with_yaml_aliases_is_refused_before_it_expands() -> None:
    levels = ['a0: &a0 ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]']
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 7)]
    meta = "\n".join(levels) + "\nsubmission_1:\n  :submitters:\n  - :name: *a6\n"
    with pytest.raises(ArchiveRefused) as refused:
        intake.parse_metadata(meta.encode())  # 9**6 lists of 41 characters if expanded
    assert "the metadata file uses YAML aliases, which a Gradescope export never does" in (
        refused.value.message
    )
    assert "Nothing was stored." in refused.value.message
    one_anchor = b"s: &x\n  :submitters: []\n"
    with pytest.raises(ArchiveRefused, match="uses YAML aliases"):
        intake.parse_metadata(one_anchor)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("[a, b]", "a submitter's name is not a single value"),
        ("{x: 1}", "a submitter's name is not a single value"),
        ("n" * 400, "a submitter's name is 400 characters long; at most 320"),
    ],
)
def test_a_submitters_fields_are_single_short_values(value: str, said: str) -> None:
    meta = f"submission_1:\n  :submitters:\n  - :name: {value}\n    :email: a@uni.edu\n"
    with pytest.raises(ArchiveRefused, match=said.replace("[", r"\[")):
        intake.parse_metadata(meta.encode())


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
