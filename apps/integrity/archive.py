"""Reading an uploaded zip without trusting it: pure functions of the bytes, no database.

`read_zip` either returns every member's bytes or raises `ArchiveRefused` naming the first
problem found, before anything is stored: not a zip, too large, too many files, a path that
leaves the archive (`../`, an absolute or drive path), a symbolic link, or a zip bomb (a member
that expands more than `MAX_RATIO` times, members that together expand more than `MAX_RATIO`
times the upload, or past `MAX_TOTAL_BYTES` in all). The limits hold for the upload as a whole:
a zip of zips shares one budget of bytes and files, so each inner zip does not get a fresh one.
Sizes are checked twice: as the archives declare them, and while reading, since a crafted
archive can understate them.
"""

from __future__ import annotations

import io
import stat
import zipfile
import zlib
from dataclasses import dataclass

MAX_UPLOAD_BYTES = 50 * 1024 * 1024  # the zip as uploaded
MAX_TOTAL_BYTES = 200 * 1024 * 1024  # every member, uncompressed, together
MAX_MEMBER_BYTES = 20 * 1024 * 1024  # one member, uncompressed
MAX_FILES = 5_000
MAX_RATIO = 100  # uncompressed / compressed, per member of more than 1 MiB
RATIO_FLOOR = 1024 * 1024
MAX_NESTING = 1  # a zip of per-group zips, no deeper


# What a damaged, encrypted or crafted member raises while being read (found by fuzzing: a
# flipped byte in a deflate stream raises zlib.error, not BadZipFile).
UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    ValueError,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    UnicodeDecodeError,
)


class ArchiveRefused(Exception):
    """The upload was refused; `message` says why, for the person who uploaded it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Member:
    path: str  # "/"-separated, relative, no ".." (checked)
    data: bytes


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MiB"


def path_problem(name: str) -> str | None:
    """Why a member's name may not be extracted, or None."""
    if "\x00" in name:
        return f"“{name!r}” has a NUL byte in its name"
    clean = name.replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        return f"“{name}” is an absolute path"
    if any(part == ".." for part in clean.split("/")):
        return f"“{name}” points outside the archive (../)"
    return None


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


@dataclass
class _Budget:
    """What the whole upload has used so far, across its nested zips: one limit for all."""

    upload: int  # bytes of the outermost zip, as uploaded
    declared: int = 0  # uncompressed sizes the archives declare, every level
    read: int = 0  # bytes actually read, every level
    files: int = 0  # files, every level


def _over_ratio(n: int, budget: _Budget) -> bool:
    """More than `MAX_RATIO` times the upload, past `RATIO_FLOOR`: a bomb made of many small
    members (each under the per-member check) or of zips inside the zip."""
    return n > RATIO_FLOOR and n > MAX_RATIO * max(budget.upload, 1)


def _refuse_total(name: str, n: int, budget: _Budget, *, when: str) -> None:
    if n > MAX_TOTAL_BYTES:
        raise ArchiveRefused(
            f"{name} expands past {_mib(MAX_TOTAL_BYTES)} {when}, counting every inner zip; "
            f"the limit is {_mib(MAX_TOTAL_BYTES)} for the whole upload (a zip bomb?). "
            "Nothing was stored."
        )
    if _over_ratio(n, budget):
        raise ArchiveRefused(
            f"{name} expands to more than {MAX_RATIO} times the {budget.upload:,} bytes uploaded "
            f"{when} (a zip bomb). Nothing was stored."
        )


def read_zip(
    data: bytes, *, name: str = "the upload", depth: int = 0, budget: _Budget | None = None
) -> list[Member]:
    """Every file of the zip (folders left out), each checked; nested `.zip` members are opened
    with the same checks (one level), their files named `<zip name without .zip>/<path>`. The
    limits on size, ratio and file count hold for the upload as a whole, inner zips included."""
    if budget is None:
        budget = _Budget(upload=len(data))
    if len(data) > MAX_UPLOAD_BYTES:
        raise ArchiveRefused(
            f"{name} is {_mib(len(data))}; the limit is {_mib(MAX_UPLOAD_BYTES)}. "
            "Nothing was stored."
        )
    if not data.startswith(b"PK") or not zipfile.is_zipfile(io.BytesIO(data)):
        raise ArchiveRefused(
            f"{name} is not a zip archive (its first bytes are not a zip's). Upload the .zip "
            "from Gradescope's “Export submissions”, or a zip of one folder per group. "
            "Nothing was stored."
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except UNREADABLE as exc:
        raise ArchiveRefused(f"{name} is a damaged zip ({exc}). Nothing was stored.") from exc
    files = [i for i in infos if not i.is_dir()]
    budget.files += len(files)
    if budget.files > MAX_FILES:
        raise ArchiveRefused(
            f"{name} holds {budget.files:,} files; the limit is {MAX_FILES:,} for the whole "
            "upload, inner zips' files included. Nothing was stored."
        )
    for info in infos:
        problem = path_problem(info.filename)
        if problem:
            raise ArchiveRefused(f"{name}: {problem}; refused. Nothing was stored.")
        if _is_symlink(info):
            raise ArchiveRefused(
                f"{name}: “{info.filename}” is a symbolic link; links are refused. "
                "Nothing was stored."
            )
        budget.declared += info.file_size
        _check_ratio(name, info.filename, info.file_size, info.compress_size)
    _refuse_total(name, budget.declared, budget, when="as declared")
    out: list[Member] = []
    for info in files:
        body = _read_member(archive, info, name)
        budget.read += len(body)
        _refuse_total(name, budget.read, budget, when="when read")
        path = info.filename.replace("\\", "/").strip("/")
        if path.lower().endswith(".zip") and depth < MAX_NESTING:
            inner = read_zip(body, name=f"{name} › {path}", depth=depth + 1, budget=budget)
            stem = path[:-4]
            out += [Member(f"{stem}/{m.path}", m.data) for m in inner]
        else:
            out.append(Member(path, body))
    return out


def _check_ratio(name: str, member: str, size: int, compressed: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise ArchiveRefused(
            f"{name}: “{member}” expands to {_mib(size)}; one file may be at most "
            f"{_mib(MAX_MEMBER_BYTES)}. Nothing was stored."
        )
    if size > RATIO_FLOOR and size > MAX_RATIO * max(compressed, 1):
        raise ArchiveRefused(
            f"{name}: “{member}” expands {size // max(compressed, 1):,} times (more than "
            f"{MAX_RATIO}: a zip bomb). Nothing was stored."
        )


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> bytes:
    """The member's bytes, reading at most one byte past its limit (the declared size may lie)."""
    try:
        with archive.open(info) as stream:
            body = stream.read(MAX_MEMBER_BYTES + 1)
    except UNREADABLE as exc:
        raise ArchiveRefused(
            f"{name}: “{info.filename}” cannot be read ({exc}). Nothing was stored."
        ) from exc
    _check_ratio(name, info.filename, len(body), info.compress_size)
    return body
