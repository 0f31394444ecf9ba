"""Arrows point down: no import circle among the modules of `apps/`.

The graph is built from the source with `ast`, every `import` counted wherever it stands (a
function-level import is still an arrow: it only moves the failure from start-up to the first
call). The one circle allowed is the calculator's plugin pattern: each formula module registers
into `apps/perfcalc/calc/registry.py`, which imports the package to load them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED_PREFIX = "apps.perfcalc.calc.formulas"  # formulas ↔ registry: a plugin registry
ALLOWED_PARTNER = "apps.perfcalc.calc.registry"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, package: str = "apps") -> dict[str, set[str]]:
    """Module → the first-party modules it imports (a `from pkg import name` that names a
    submodule counts as an arrow to the submodule)."""
    files = {
        module_name(p, root): p
        for p in (root / package).rglob("*.py")
        if "migrations" not in p.parts
    }
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith(package):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def allowed(component: list[str]) -> bool:
    return all(m == ALLOWED_PARTNER or m.startswith(ALLOWED_PREFIX) for m in component)


def test_no_import_circle_in_apps() -> None:
    bad = [c for c in cycles(import_graph(ROOT)) if not allowed(c)]
    assert not bad, "import circles (tasks import services, never the reverse):\n" + "\n".join(
        " ↔ ".join(c) for c in bad
    )


def test_the_check_finds_a_planted_circle(tmp_path: Path) -> None:
    """The same check on a copy of one app with one arrow pointed up: services → tasks."""
    app = tmp_path / "apps" / "demo"
    app.mkdir(parents=True)
    (tmp_path / "apps" / "__init__.py").write_text("")
    (app / "__init__.py").write_text("")
    (app / "services.py").write_text("def run():\n    from apps.demo import tasks\n")
    (app / "tasks.py").write_text("from apps.demo.services import run\n")
    (app / "rules.py").write_text("X = 1\n")
    assert cycles(import_graph(tmp_path)) == [["apps.demo.services", "apps.demo.tasks"]]
    (app / "services.py").write_text("from .rules import X\n")
    assert cycles(import_graph(tmp_path)) == []


@pytest.mark.parametrize(
    ("component", "ok"),
    [
        (["apps.perfcalc.calc.formulas.serving", "apps.perfcalc.calc.registry"], True),
        (["apps.scribing.services", "apps.scribing.tasks"], False),
    ],
)
def test_only_the_calculators_registry_may_circle(component: list[str], ok: bool) -> None:
    assert allowed(component) is ok


# Compute's floors, lowest first. The ground holds the models and the few helpers they share; the
# board (allocation, windows, moves, incidents) stands on it; the cloud (providers, jobs, sync,
# inventory, preflight) on the board; usage (samples, GPU-hours, quotas, schedules, budget) on
# both. The faces that wire every floor (the app config, URL conf, API, admin, commands) stand on
# top. Where a lower floor needs a higher one it offers a seam (`board/hooks.py`,
# `cloud/hooks.py`, lifecycle subscribers) that the higher floor registers with.
COMPUTE_FLOORS = {
    "apps.compute.board": 1,
    "apps.compute.cloud": 2,
    "apps.compute.usage": 3,
    "apps.compute.apps": 4,
    "apps.compute.urls": 4,
    "apps.compute.admin": 4,
    "apps.compute.api": 4,
    "apps.compute.management": 4,
}


def compute_floor(module: str) -> int | None:
    """The floor of a module of `apps.compute` (0: the ground), None outside it."""
    if module != "apps.compute" and not module.startswith("apps.compute."):
        return None
    for prefix, floor in COMPUTE_FLOORS.items():
        if module == prefix or module.startswith(prefix + "."):
            return floor
    return 0


def upward_arrows(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports inside compute that run from a lower floor to a higher one."""
    found = []
    for module, targets in sorted(graph.items()):
        here = compute_floor(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = compute_floor(target)
            if there is not None and there > here:
                found.append((module, target))
    return found


def test_compute_arrows_point_down() -> None:
    """The board imports neither the cloud nor usage, the cloud does not import usage, and the
    ground (models) imports no floor: every import inside compute goes to its own floor or one
    below."""
    graph = import_graph(ROOT)
    assert {"apps.compute.board.views", "apps.compute.cloud.sync"} <= set(graph)
    assert "apps.compute.usage.quotas" in graph
    bad = upward_arrows(graph)
    assert not bad, "compute imports that run up a floor:\n" + "\n".join(
        f"{a} → {b}" for a, b in bad
    )


def test_the_floor_check_finds_an_arrow_up(tmp_path: Path) -> None:
    """The same check on a planted copy: the board reaching for the cloud (even inside a
    function), the cloud for usage and the models for the board are each found; usage using the
    board and the cloud is not."""
    compute = tmp_path / "apps" / "compute"
    for d in ("board", "cloud", "usage"):
        (compute / d).mkdir(parents=True)
        (compute / d / "__init__.py").write_text("")
    (tmp_path / "apps" / "__init__.py").write_text("")
    (compute / "__init__.py").write_text("")
    (compute / "models.py").write_text("from apps.compute.board import views\n")
    (compute / "board" / "views.py").write_text(
        "def f():\n    from apps.compute.cloud import sync\n"
    )
    (compute / "cloud" / "sync.py").write_text("from apps.compute.usage.quotas import x\n")
    (compute / "usage" / "quotas.py").write_text(
        "from apps.compute.board import views\nfrom apps.compute.cloud import sync\n"
        "from apps.compute import models\nx = 1\n"
    )
    bad = upward_arrows(import_graph(tmp_path))
    assert {a for a, _ in bad} == {
        "apps.compute.board.views",
        "apps.compute.cloud.sync",
        "apps.compute.models",
    }
    assert ("apps.compute.board.views", "apps.compute.cloud.sync") in bad
    assert ("apps.compute.cloud.sync", "apps.compute.usage.quotas") in bad
