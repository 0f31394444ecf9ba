"""The side-by-side view's text: a file with its matching character ranges marked, escaped,
as numbered lines (a mark that spans lines is closed and reopened at each line end)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def highlighted_lines(text: str, slices: list[list[int]]) -> list[tuple[int, SafeString, bool]]:
    """(line number, the line's HTML with <mark>s, whether any of it matched)."""
    marked = [False] * (len(text) + 1)
    for start, end in slices:
        for i in range(max(0, start), min(len(text), end)):
            marked[i] = True
    out: list[tuple[int, SafeString, bool]] = []
    pos = 0
    for number, line in enumerate(text.split("\n"), 1):
        parts: list[str] = []
        any_mark = False
        i = 0
        while i < len(line):
            j = i
            on = marked[pos + i]
            while j < len(line) and marked[pos + j] == on:
                j += 1
            chunk = escape(line[i:j])
            parts.append(f"<mark>{chunk}</mark>" if on else chunk)
            any_mark = any_mark or on
            i = j
        out.append((number, mark_safe("".join(parts)), any_mark))
        pos += len(line) + 1
    return out
