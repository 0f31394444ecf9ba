"""Writes `api/operations.md` from the app's OpenAPI schema (drf-spectacular) before Sphinx reads
the sources: every operation with its parameters, body fields and answers, grouped by tag."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

HEAD = """# Every operation

Generated at each build from the schema the server serves at `/api/schema/` (drf-spectacular),
so it lists exactly what the code accepts. Try them in the running app's Swagger UI at
`/api/docs/`.
"""


def _schema() -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "courseops.settings.dev")
    import django

    django.setup()
    from drf_spectacular.generators import SchemaGenerator

    return dict(SchemaGenerator().get_schema(request=None, public=True))


def _cell(text: object) -> str:
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _fields(schema: dict[str, Any], ref: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(name, type, description) of a request body's top-level fields."""
    if "$ref" in ref:
        ref = schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]
    rows = []
    required = set(ref.get("required", []))
    for name, prop in (ref.get("properties") or {}).items():
        if prop.get("readOnly"):
            continue
        kind = prop.get("type") or ("object" if "$ref" in prop else "")
        if prop.get("format"):
            kind += f" ({prop['format']})"
        rows.append((name + (" *" if name in required else ""), kind, prop.get("description", "")))
    return rows


def render(schema: dict[str, Any]) -> str:
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            tag = (op.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((method.upper(), path, op))
    out = [HEAD]
    for tag in sorted(by_tag):
        out.append(f"\n## {tag}\n")
        for method, path, op in by_tag[tag]:
            out.append(f"\n### `{method} {path}`\n")
            text = op.get("description") or op.get("summary") or ""
            if text:
                out.append(text.strip() + "\n")
            params = op.get("parameters") or []
            if params:
                out.append("\n| parameter | in | meaning |\n|---|---|---|")
                for p in params:
                    req = " *" if p.get("required") else ""
                    out.append(
                        f"| `{p['name']}`{req} | {p['in']} | {_cell(p.get('description'))} |"
                    )
            body = (op.get("requestBody") or {}).get("content") or {}
            for ctype, media in list(body.items())[:1]:
                rows = _fields(schema, media.get("schema") or {})
                if rows:
                    out.append(f"\n| body field ({ctype}) | type | meaning |\n|---|---|---|")
                    for name, kind, desc in rows:
                        out.append(f"| `{name}` | {kind} | {_cell(desc)} |")
            answers = ", ".join(
                f"{code} {_cell(r.get('description'))}".strip()
                for code, r in (op.get("responses") or {}).items()
            )
            out.append(f"\nAnswers: {answers}.\n")
    return "\n".join(out) + "\n"


def _write(app: Any) -> None:
    target = Path(app.srcdir) / "api" / "operations.md"
    text = render(_schema())
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(exist_ok=True)
        target.write_text(text, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True, "version": "1"}
