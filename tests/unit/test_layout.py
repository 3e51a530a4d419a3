"""The package has no import cycle at module level (lazy imports inside functions aside)."""
from __future__ import annotations

import ast
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runner"


def _modules() -> dict[str, Path]:
    out = {}
    for p in RUNNER.rglob("*.py"):
        name = ".".join(p.relative_to(RUNNER.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def _graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.parse(p.read_text()).body:  # TYPE_CHECKING blocks are `if`s: not imports at run time
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("runner"):
                target = node.module
            else:
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & mods.keys()
            if len(subs) < len(node.names) and target in mods:
                subs.add(target)
            graph[m] |= subs - {m}
    return graph


def test_no_import_cycle() -> None:
    graph = _graph(_modules())
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for d in sorted(graph[n]):
            if state.get(d) == 1:
                cycles.append(path[path.index(d):] + [d])
            elif d not in state:
                visit(d, [*path, d])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert len(graph) > 100 and cycles == []
