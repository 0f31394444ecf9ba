"""What an accepted archive holds, as plain values: which files belong to which submission
(a Gradescope export's `submission_metadata.yml`, or one top-level folder per group), each
file's kind (code by language, report text, skipped) and its text. No database.

Gradescope's "Export submissions" zip has a folder per submission (`submission_123/…`),
possibly under one top folder, and `submission_metadata.yml` mapping each folder name to
`:submitters:` (each with `:name:`, `:sid:`, `:email:`), written by Ruby: keys start with `:`
and some values carry Ruby tags, which are read as plain values here.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
from dataclasses import dataclass, field
from typing import Any

import yaml

from apps.integrity.archive import ArchiveRefused, Member

METADATA = "submission_metadata.yml"
MAX_TEXT_CHARS = 400_000  # longer files are skipped, with a note

LANGUAGES = {
    ".py": "python",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".java": "java",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".scala": "scala",
    ".jl": "julia",
    ".sh": "bash",
}
REPORTS = {".pdf", ".md", ".txt", ".tex"}
IGNORED_PARTS = {"__MACOSX", ".git", "__pycache__", ".ipynb_checkpoints", "node_modules"}


@dataclass
class SourceFile:
    path: str
    kind: str  # "code" | "report"
    language: str  # pygments lexer name, or "text" for reports
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass
class Submission:
    key: str  # the folder's name
    people: list[dict[str, str]] = field(default_factory=list)  # [{"email":…, "sid":…, "name":…}]
    files: list[SourceFile] = field(default_factory=list)


@dataclass
class Contents:
    source: str  # "gradescope" | "folders"
    submissions: dict[str, Submission]
    skipped: list[str] = field(default_factory=list)


class _AliasRefused(Exception):
    pass


class _RubyTolerantLoader(yaml.SafeLoader):
    """SafeLoader that reads Ruby-tagged values (`!ruby/object:BigDecimal 18:0.9E1`) as their
    plain scalar, sequence or mapping instead of refusing the file, and refuses anchors and
    aliases while composing, before anything is built: a few hundred bytes of nested aliases
    expand to millions of characters (a "billion laughs"), and Gradescope never writes them."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _AliasRefused
        return super().compose_node(parent, index)


def _untagged(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_RubyTolerantLoader.add_multi_constructor("!", _untagged)
_RubyTolerantLoader.add_multi_constructor("tag:", _untagged)


def _plain(key: Any) -> str:
    return str(key).lstrip(":").strip()


MAX_FIELD_CHARS = 320  # a submitter's name, email or SID (an email is at most 254)
PERSON_FIELDS = ("email", "sid", "name")


def _person(folder: str, person: dict[Any, Any]) -> dict[str, str]:
    """A submitter's email, SID and name, each a single short value, checked before any of it
    is turned into a string."""
    fields = {_plain(k): v for k, v in person.items() if isinstance(k, str | int)}
    out = {}
    for name in PERSON_FIELDS:
        value = fields.get(name)
        if value is None:
            out[name] = ""
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ArchiveRefused(
                f"{METADATA}: {folder[:100]}: a submitter's {name} is not a single value. "
                "Nothing was stored."
            )
        text = str(value).strip()
        if len(text) > MAX_FIELD_CHARS:
            raise ArchiveRefused(
                f"{METADATA}: {folder[:100]}: a submitter's {name} is {len(text):,} characters "
                f"long; at most {MAX_FIELD_CHARS} are read. Nothing was stored."
            )
        out[name] = text
    return out


def parse_metadata(data: bytes) -> dict[str, list[dict[str, str]]]:
    """Folder name → its submitters ({"email", "sid", "name"}), from submission_metadata.yml."""
    try:
        raw = yaml.load(data.decode("utf-8", "replace"), Loader=_RubyTolerantLoader)  # noqa: S506
    except _AliasRefused as exc:
        raise ArchiveRefused(
            f"{METADATA} was refused: the metadata file uses YAML aliases, which a Gradescope "
            "export never does (anchors `&` and aliases `*` can expand a small file to "
            "gigabytes). Nothing was stored."
        ) from exc
    except yaml.YAMLError as exc:
        raise ArchiveRefused(
            f"{METADATA} is not readable YAML ({exc}). Nothing was stored."
        ) from exc
    if not isinstance(raw, dict):
        raise ArchiveRefused(
            f"{METADATA} does not map submission folders to submitters. Nothing was stored."
        )
    out: dict[str, list[dict[str, str]]] = {}
    for folder, entry in raw.items():
        if not isinstance(folder, str | int):
            raise ArchiveRefused(
                f"{METADATA} has a key that is not a submission folder's name. Nothing was stored."
            )
        submitters: Any = []
        if isinstance(entry, dict):
            entry = {_plain(k): v for k, v in entry.items() if isinstance(k, str | int)}
            submitters = entry.get("submitters") or []
        out[str(folder)] = [
            _person(str(folder), person)
            for person in (submitters if isinstance(submitters, list) else [])
            if isinstance(person, dict)
        ]
    return out


def pdf_text(data: bytes) -> str:
    """The text of a PDF's pages (pypdf), or "" when it has none or cannot be read."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        return "\n".join((page.extract_text() or "") for page in reader.pages[:200])
    except Exception:
        return ""


def normalize_report(text: str) -> str:
    """Report text compared as words: lower case, runs of white space as one space."""
    return " ".join(text.lower().split())


def classify(path: str, data: bytes) -> SourceFile | str:
    """The file as compared, or why it is skipped."""
    ext = posixpath.splitext(path)[1].lower()
    if ext in LANGUAGES:
        text = data.decode("utf-8", "replace")
        kind, language = "code", LANGUAGES[ext]
    elif ext in REPORTS:
        raw = pdf_text(data) if ext == ".pdf" else data.decode("utf-8", "replace")
        text, kind, language = normalize_report(raw), "report", "text"
        if not text:
            return f"{path}: no text in it"
    else:
        return ""  # not a code or report file: silently left out
    if len(text) > MAX_TEXT_CHARS:
        return f"{path}: longer than {MAX_TEXT_CHARS:,} characters"
    return SourceFile(path, kind, language, text.replace("\x00", ""))


def _strip_root(members: list[Member]) -> list[Member]:
    """Drop one folder every member shares (Gradescope's `assignment_…_export/`)."""
    while members:
        tops = {m.path.split("/", 1)[0] for m in members}
        if len(tops) != 1 or all("/" not in m.path for m in members):
            return members
        members = [Member(m.path.split("/", 1)[1], m.data) for m in members if "/" in m.path]
    return members


def contents(members: list[Member]) -> Contents:
    """Files by submission folder: Gradescope's when the metadata file is there, else one
    top-level folder per group."""
    members = [
        m
        for m in members
        if not (set(m.path.split("/")) & IGNORED_PARTS)
        and not posixpath.basename(m.path).startswith("._")
    ]
    members = _strip_root(members)
    meta = next((m for m in members if m.path == METADATA), None)
    source = "gradescope" if meta is not None else "folders"
    people = parse_metadata(meta.data) if meta is not None else {}
    subs: dict[str, Submission] = {k: Submission(k, v) for k, v in people.items()}
    skipped: list[str] = []
    for m in members:
        if m.path == METADATA:
            continue
        if "/" not in m.path:
            skipped.append(f"{m.path}: not inside a submission's folder")
            continue
        folder, rest = m.path.split("/", 1)
        found = classify(rest, m.data)
        if isinstance(found, str):
            if found:
                skipped.append(f"{folder}/{found}")
            continue
        subs.setdefault(folder, Submission(folder)).files.append(found)
    if not any(s.files for s in subs.values()):
        raise ArchiveRefused(
            "The archive has no code or report files inside submission folders (code: "
            + ", ".join(sorted(LANGUAGES))
            + "; reports: .pdf .md .txt .tex). Nothing was stored."
        )
    return Contents(source, subs, skipped)


def starter_files(members: list[Member]) -> list[SourceFile]:
    """The starter code's files (any layout), as compared."""
    out = []
    for m in members:
        found = classify(m.path, m.data)
        if isinstance(found, SourceFile):
            out.append(found)
    return out
