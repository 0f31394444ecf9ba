"""Writes `configuration.md` from courseops/settings/env.py before Sphinx reads the sources: every
environment variable courseops reads, with its default, type, what it does and the guide section
that explains it. The declaration is the one the settings read through and that
tests/core/test_env_declared.py holds the code to, so this page cannot drift from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

HEAD = """# Configuration reference

Every environment variable courseops reads, generated at each docs build from its one
declaration (`courseops/settings/env.py`); a test fails when the code reads a variable that is
not declared there, or reads it with another default. Development (`make run`) needs none of
them. An empty default means unset; "in development" is what `make run` reads instead.
"""


def _cell(text: object) -> str:
    return " ".join(str(text or "").split()).replace("|", "\\|")


def render() -> str:
    from courseops.settings.env import SECTIONS, VARS

    out = [HEAD]
    for key, (title, guide) in SECTIONS.items():
        rows = [v for v in VARS if v.section == key]
        if not rows:
            continue
        doc, _, anchor = guide.partition("#")
        link = f"[{doc.removesuffix('.md')}]({doc}{'#' + anchor if anchor else ''})"
        out.append(f"\n## {title}\n\nExplained in {link}.\n")
        out.append("| variable | default | type | what it does |\n|---|---|---|---|")
        for v in rows:
            default = f"`{v.default}`" if v.default else "unset"
            if v.unset_means:
                default += f": {v.unset_means}"
            if v.dev_default is not None:
                default += f"; in development `{v.dev_default}`"
            out.append(f"| `{v.name}` | {_cell(default)} | {v.kind} | {_cell(v.help)} |")
    return "\n".join(out) + "\n"


def _write(app: Any) -> None:
    target = Path(app.srcdir) / "configuration.md"
    text = render()
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
