"""Every environment variable the code reads is declared once in courseops/settings/env.py (the
configuration reference in the docs is generated from it), with the default the code uses.

The scan reads the source (AST) of courseops/ and apps/: `os.environ.get(NAME, default)`,
`os.environ[NAME]`, `os.getenv(NAME, default)`, `os.environ.setdefault(NAME, …)`,
`NAME in os.environ` and the settings helpers `env_bool`, `env_list`, `env_str`. A read by a
name the scan cannot see (a variable, an f-string) fails too: the reference could not list it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from courseops.settings.env import BY_NAME, SECTIONS, VARS

ROOT = Path(__file__).resolve().parents[2]
HELPERS = {"env_bool", "env_list", "env_str"}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def reads(source: str, where: str) -> list[tuple[str, str, object]]:
    """(where, NAME or a problem, the default the code gives: a constant, or ... for none/unknown)."""
    out: list[tuple[str, str, object]] = []

    def name_of(arg: ast.AST, line: int) -> str:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        return f"<a name the scan cannot read, line {line}>"

    for node in ast.walk(ast.parse(source)):
        at = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            default: object = ...
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                default = node.args[1].value
            if (
                (
                    isinstance(f, ast.Attribute)
                    and f.attr in {"get", "setdefault", "pop"}
                    and (_is_environ(f.value))
                )
                or (isinstance(f, ast.Attribute) and f.attr == "getenv")
                or (isinstance(f, ast.Name) and f.id in HELPERS)
            ):
                out.append((at, name_of(node.args[0], node.lineno), default))
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            out.append((at, name_of(node.slice, node.lineno), ...))
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            out.append((at, name_of(node.left, node.lineno), ...))
    return out


def _same(default: object, declared: str) -> bool:
    if default == "":  # "" is how the declarations write "unset": a read that asks whether set
        return True
    if isinstance(default, bool):
        return default == (declared.lower() in {"1", "true", "yes", "on"})
    return str(default) == declared


def problems(source: str, where: str) -> list[str]:
    found = []
    for at, name, default in reads(source, where):
        var = BY_NAME.get(name)
        if var is None:
            found.append(f"{at}: {name} is read but not declared in courseops/settings/env.py")
        elif default is not ... and not any(
            _same(default, d) for d in (var.default, var.dev_default) if d is not None
        ):
            found.append(f"{at}: {name} read with default {default!r}, declared {var.default!r}")
    return found


@functools.cache
def _sources() -> tuple[Path, ...]:
    files = [*(ROOT / "courseops").rglob("*.py"), *(ROOT / "apps").rglob("*.py")]
    return tuple(f for f in files if f.name != "env.py" and "migrations" not in f.parts)


def test_the_scan_finds_a_planted_undeclared_variable_and_a_drifted_default() -> None:
    planted = 'import os\nX = os.environ.get("COURSEOPS_PLANTED", "1")\nY = os.environ["Z9"]\n'
    assert problems(planted, "p.py") == [
        "p.py:2: COURSEOPS_PLANTED is read but not declared in courseops/settings/env.py",
        "p.py:3: Z9 is read but not declared in courseops/settings/env.py",
    ]
    drifted = (
        'import os\nN = int(os.getenv("REMINDER_BATCH", "500"))\nD = env_bool("DEBUG", True)\n'
    )
    assert problems(drifted, "d.py") == [
        "d.py:2: REMINDER_BATCH read with default '500', declared '1000'"
    ]  # DEBUG's True is settings.dev's declared default
    hidden = "import os\nname = 'A'\nV = os.environ.get(name)\n"
    assert problems(hidden, "h.py") == [
        "h.py:3: <a name the scan cannot read, line 3> is read but not declared in "
        "courseops/settings/env.py"
    ]


def test_every_variable_the_code_reads_is_declared_with_its_default() -> None:
    files = _sources()
    assert len(files) > 100
    found = [p for f in files for p in problems(f.read_text(), str(f.relative_to(ROOT)))]
    read = {name for f in files for _, name, _ in reads(f.read_text(), str(f))}
    assert len(read) >= 70, sorted(read)  # the scan sees the settings' reads
    assert found == [], "\n".join(found)


def test_every_declaration_is_read_somewhere_and_names_a_guide_section() -> None:
    """A declaration nobody reads would document a setting that does nothing."""
    read = {name for f in _sources() for _, name, _ in reads(f.read_text(), str(f))}
    implicit = {"DATABASE_URL"}  # dj_database_url.config() reads it
    assert [v.name for v in VARS if v.name not in read | implicit] == []
    assert [v.name for v in VARS if v.section not in SECTIONS] == []
    assert len(BY_NAME) == len(VARS)  # each declared once
