"""The comparison: copydetect's winnowing fingerprints (Schleimer, Wilkerson and Aiken's
robust winnowing over k-grams of pygments tokens, identifiers and comments filtered out), over
each group's code files by language and over report text, with the starter code's fingerprints
removed as boilerplate. Only files of different groups are compared. No database.

`copydetect.CodeFingerprint` hashes k-grams with Python's `hash`, which differs between
processes; every fingerprint of one check is made in the one process that compares them.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from apps.integrity.intake import SourceFile

K = 25  # copydetect's noise threshold: a match shorter than 25 tokens is ignored
WINDOW = 6  # guarantee threshold 30: every match of 30 tokens or more is found
ENGINE = f"copydetect k={K} w={WINDOW}"  # part of the inputs' hash: a change recomputes

Progress = Callable[[int, int], None]
Heartbeat = Callable[[], None]  # "still working": called after each fingerprint and pair


@dataclass
class FilePair:
    file_a: int  # index into the group's file list
    file_b: int
    percent_a: float  # share of A's file found in B's, 0..1
    percent_b: float
    slices_a: list[list[int]]  # [start, end) character ranges in A's text
    slices_b: list[list[int]]

    @property
    def percent(self) -> float:
        return max(self.percent_a, self.percent_b)


@dataclass
class GroupPair:
    a: Any  # the units' keys (group ids), a < b
    b: Any
    files: list[FilePair] = field(default_factory=list)

    @property
    def best(self) -> FilePair | None:
        return max(self.files, key=lambda f: f.percent, default=None)

    @property
    def percent(self) -> float:
        best = self.best
        return best.percent if best else 0.0


def _quiet() -> None:
    # copydetect logs a warning for every file it does not tokenize; the check reports its own.
    logging.getLogger("copydetect").setLevel(logging.ERROR)


def fingerprint(f: SourceFile, boilerplate: Any = None) -> Any:
    from copydetect import CodeFingerprint

    code = f.kind == "code"
    return CodeFingerprint(
        f.path,
        K,
        WINDOW,
        boilerplate=boilerplate if boilerplate is not None else [],
        filter=code,
        language=f.language if code else None,
        fp=io.StringIO(f.text),
    )


def boilerplate_hashes(starter: Sequence[SourceFile]) -> Any:
    """Every fingerprint of the starter code, to be ignored in the groups' files."""
    found = [np.array(list(fingerprint(f).hashes), dtype=np.int64) for f in starter]
    if not found:
        return np.array([], dtype=np.int64)
    return np.unique(np.concatenate(found))


def _slices(arr: Any) -> list[list[int]]:
    if arr is None or len(arr) == 0 or np.asarray(arr).size == 0:
        return []
    a = np.asarray(arr)
    return [[int(s), int(e)] for s, e in zip(a[0], a[1], strict=True)]


def compare(
    units: dict[Any, list[SourceFile]],
    starter: Sequence[SourceFile] = (),
    progress: Progress | None = None,
    heartbeat: Heartbeat | None = None,
) -> list[GroupPair]:
    """Every pair of units (groups) with at least one matching file pair, best first. Files are
    compared only with files of the same kind and language."""
    from copydetect import compare_files

    def beat() -> None:
        if heartbeat is not None:
            heartbeat()

    _quiet()
    base = boilerplate_hashes(starter)
    prints: dict[Any, list[Any]] = {}
    for key, files in units.items():
        prints[key] = []
        for f in files:
            prints[key].append(fingerprint(f, base))
            beat()
    keys = sorted(units, key=str)
    pairs = list(combinations(keys, 2))
    out: list[GroupPair] = []
    for done, (a, b) in enumerate(pairs, 1):
        gp = GroupPair(a, b)
        for i, fa in enumerate(units[a]):
            for j, fb in enumerate(units[b]):
                if (fa.kind, fa.language) != (fb.kind, fb.language):
                    continue
                pa, pb = prints[a][i], prints[b][j]
                if not pa.hashes or not pb.hashes:
                    continue
                overlap, (sa, sb), (sl_a, sl_b) = compare_files(pa, pb)
                if overlap <= 0:
                    continue
                gp.files.append(FilePair(i, j, float(sa), float(sb), _slices(sl_a), _slices(sl_b)))
        if gp.files:
            gp.files.sort(key=lambda f: -f.percent)
            out.append(gp)
        beat()
        if progress is not None and (done % 20 == 0 or done == len(pairs)):
            progress(done, len(pairs))
    out.sort(key=lambda p: -p.percent)
    return out
