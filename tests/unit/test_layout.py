"""The package's shape, checked on every import there is — module level, inside functions
and under TYPE_CHECKING: no cycle between modules or between packages, no module over 400
lines, no public name nothing uses, and at runner/ top level only what every stage uses."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "runner"
MAX_LINES = 400
MAX_REPEATED = 4  # module basenames (besides __init__.py) that may repeat under runner/
# What every stage uses (errors, settings and their reference, the codec and the JSON envelope,
# text safety, resources, units: durations and sizes, the optional extras, twin's secret rules):
# at most 8 modules besides __init__ and __main__; the rest of runner/ is stage packages.
TOP_LEVEL = {"__init__", "__main__", "errors", "config", "codec", "textsafe", "secretrules", "resources", "units",
             "extras"}


def _modules() -> dict[str, Path]:
    out = {}
    for p in RUNNER.rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def _imports(module: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """Every runner module `module` imports, wherever the import statement stands."""
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in mods}
            continue
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
        found |= subs
    return found - {module}


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(m, p, mods) for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cycles.append(path[path.index(d):] + [d])
            elif d not in state:
                visit(d, [*path, d])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    return cycles


def _package(module: str) -> str:
    """runner.X for anything inside the stage package X; a top-level module is its own."""
    return ".".join(module.split(".")[:2])


def test_no_module_import_cycle() -> None:
    graph = _graph()
    assert len(graph) > 100 and _cycles(graph) == []


def test_no_package_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for m, deps in _graph().items():
        graph.setdefault(_package(m), set()).update(_package(d) for d in deps if _package(d) != _package(m))
    assert _cycles(graph) == []


def test_the_layout_test_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    mods = {"runner.a": tmp_path / "a.py", "runner.b": tmp_path / "b.py", "runner.c": tmp_path / "c.py"}
    mods["runner.a"].write_text("def f():\n    from . import b\n")
    mods["runner.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import X\n")
    mods["runner.c"].write_text("import runner.a\n")
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    assert _cycles(graph) == [["runner.a", "runner.b", "runner.c", "runner.a"]]


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in RUNNER.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_a_module_name_means_one_thing() -> None:
    """Issue 40: a newcomer reading `diff.py` knows which one is meant. Besides __init__.py, at most
    MAX_REPEATED basenames repeat anywhere under runner/ (none did when this was written)."""
    seen: dict[str, list[str]] = {}
    for p in RUNNER.rglob("*.py"):
        if p.name != "__init__.py":
            seen.setdefault(p.name, []).append(str(p.relative_to(ROOT)))
    repeated = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert len(repeated) <= MAX_REPEATED, repeated


def test_the_views_do_not_import_the_replay_stage() -> None:
    """Issue 40: runner/report/ writes the report model (runner/outcome/), it does not reach into the
    replay stage that builds it, wherever the import stands."""
    found = {f"{m} -> {d}" for m, deps in _graph().items() if m.startswith("runner.report.") or m == "runner.report"
             for d in deps if d == "runner.replay" or d.startswith("runner.replay.")}
    assert found == set()


def test_the_top_level_holds_only_what_every_stage_uses() -> None:
    assert {p.stem for p in RUNNER.glob("*.py")} - TOP_LEVEL == set()


def _public_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.decorator_list:
            names.append(node.name)  # a decorated function is used by its decorator (a command, a task)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_") and n not in ("register", "main", "entry", "app")]


def test_no_dead_public_name() -> None:
    """A public name defined in runner/ that nothing else in runner/, tests/ or scripts/ names."""
    texts = {p: p.read_text() for p in RUNNER.rglob("*.py")}
    elsewhere = "\n".join(p.read_text() for d in ("tests", "scripts") for p in (ROOT / d).rglob("*")
                          if p.is_file() and p.suffix in ("", ".py"))
    dead = []
    for path, text in texts.items():
        for name in _public_names(ast.parse(text)):
            word = re.compile(rf"\b{re.escape(name)}\b")
            if len(word.findall(text)) <= 1 and not word.search(elsewhere) and \
                    not any(word.search(t) for q, t in texts.items() if q != path):
                dead.append(f"{path.relative_to(ROOT)}: {name}")
    assert dead == []


def test_the_front_ends_only_wire() -> None:
    """cli/ and mcp/ hold no use case (issue 31): no function over 30 lines, and cli/ at most half its
    2,344 lines of round 4."""
    import ast as _ast

    long = []
    for base in ("cli", "mcp"):
        for path in (RUNNER / base).glob("*.py"):
            for node in _ast.walk(_ast.parse(path.read_text())):
                if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)) and \
                        (n := (node.end_lineno or node.lineno) - node.lineno + 1) > 30:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({n} lines)")
    assert long == []
    assert sum(len(p.read_text().splitlines()) for p in (RUNNER / "cli").glob("*.py")) <= 2344 // 2


def test_no_test_module_imports_another() -> None:
    """What several test modules share lives in tests/support/ (or a conftest, or a helper module
    whose name does not start with test_), never in one of the test modules."""
    found = []
    for p in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{p.relative_to(ROOT)}: {n}" for n in names
                      if n.startswith("tests.") and n.rsplit(".", 1)[-1].startswith("test_")]
    assert found == []
