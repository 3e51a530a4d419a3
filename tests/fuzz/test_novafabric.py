"""NovaFabric capsule directories, mutated: their YAML files, and the directory itself
(symlinks, FIFOs, missing files, over-long file references)."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.capsules import read_capsule
from tests.examples import MINIMAL, NOVA

from . import mutate
from .conftest import examples
from .harness import exercise
from .tally import TALLY

SEEDS = (NOVA, MINIMAL)
FILES = ("capsule.yaml", "env.lock", "replay.yaml")
PER_CLASS = 30

# A change to a capsule directory: (file name, new bytes or None to remove), or a directory action.
Change = Callable[[Path], None]


def _dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=10_000)


def _write(name: str, text: str) -> Change:
    return lambda root: (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))


def tree_changes(doc: Any, name: str, make: Callable[[Any], st.SearchStrategy[Any]]) -> st.SearchStrategy[Change]:
    return make(doc).map(lambda new: _write(name, _dump(new)))


def text_changes(text: str, name: str, make: Callable[[str], st.SearchStrategy[str]]) -> st.SearchStrategy[Change]:
    return make(text).map(lambda new: _write(name, new))


ULIDS = ("", "0" * 25, "0" * 27, "01JC4Q7W9Z2M5N8P3R6T1V0X4I", "01jc4q7w9z2m5n8p3r6t1v0x4b", "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
         "../../etc", "01JC4Q7W9Z2M5N8P3R6T1V0X4\u00df", "01JC4Q7W9Z2M5N8P3R6T1V0X4B\n", "\x1b[2J" * 7)


def bad_ulids(doc: Any) -> st.SearchStrategy[Change]:
    return st.sampled_from(ULIDS).map(lambda u: _write("capsule.yaml", _dump({**doc, "run_id": u})))


def _clear(path: Path) -> None:
    """Whatever is at path (a file, a directory, a link) is gone."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _symlink(rel: str, target: str) -> Change:
    def apply(root: Path) -> None:
        _clear(root / rel)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
    return apply


def _fifo(rel: str) -> Change:
    def apply(root: Path) -> None:
        _clear(root / rel)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / rel)
    return apply


def _remove(rel: str) -> Change:
    def apply(root: Path) -> None:
        _clear(root / rel)
    return apply


def directory_changes(seed: Path) -> dict[str, st.SearchStrategy[Change]]:
    files = sorted(p.relative_to(seed).as_posix() for p in seed.rglob("*") if p.is_file())
    targets = ("/etc/passwd", "/dev/zero", "/proc/self/environ", "..", "../..", "loop", "capsule.yaml", "missing", ".")
    return {
        "symlinks": st.tuples(st.sampled_from(files), st.sampled_from(targets)).map(lambda t: _symlink(*t)),
        "FIFOs": st.sampled_from(files).map(_fifo),
        "missing files": st.sampled_from([*files, "outputs", "inputs", ".seal"]).map(_remove),
    }


def long_refs(doc: Any) -> st.SearchStrategy[Change]:
    """A file reference 300 characters long (ENAMETOOLONG), or a path of 5,000."""
    keys = [k for k in doc if k.endswith("_ref")] + ["inputs"]
    names = st.sampled_from(("a" * 300, "d/" * 2500 + "x", "a" * 255, ("é" * 200)))

    def change(key: str, name: str) -> Change:
        new = dict(doc)
        if key == "inputs":
            new["inputs"] = [{"name": "x", "path": name, "content_hash": "sha256:" + "0" * 64, "size_bytes": 1}]
        else:
            new[key] = name
        return _write("capsule.yaml", _dump(new))
    return st.tuples(st.sampled_from(keys), names).map(lambda t: change(*t))


def classes(seed: Path) -> dict[str, st.SearchStrategy[Change]]:
    docs = {name: yaml.safe_load((seed / name).read_text()) for name in FILES if (seed / name).is_file()}
    texts = {name: (seed / name).read_text() for name in docs}
    out: dict[str, st.SearchStrategy[Change]] = {}
    for cls, make in mutate.TREE_CLASSES.items():
        if cls in ("huge strings", "many entries"):
            continue  # below, on capsule.yaml only (each case writes megabytes)
        out[cls] = st.one_of(*(tree_changes(doc, name, make) for name, doc in docs.items()))
    manifest = docs["capsule.yaml"]
    out["huge strings"] = tree_changes(manifest, "capsule.yaml", mutate.huge_strings)
    out["many entries"] = tree_changes(manifest, "capsule.yaml", mutate.many)
    out["YAML aliases"] = st.one_of(*(text_changes(t, n, mutate.yaml_aliases) for n, t in texts.items()))
    out["YAML scalars (big ints, tags, .inf)"] = st.one_of(*(text_changes(t, n, mutate.yaml_scalars) for n, t in texts.items()))
    out["duplicate and case-variant keys"] = st.one_of(*(text_changes(t, n, mutate.yaml_duplicates) for n, t in texts.items()))
    out["bad ULIDs"] = bad_ulids(manifest)
    out["long file references"] = long_refs(manifest)
    out.update(directory_changes(seed))
    return out


NAMES = list(classes(MINIMAL))
COSTLY = {"huge strings": 6, "many entries": 6}


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-nova")


@pytest.mark.parametrize("name", NAMES)
def test_mutated_capsule_directories_hold(name: str, work: Path) -> None:
    for i, seed in enumerate(SEEDS):
        run_class(name, seed, work / f"{i}-{len(name)}")
    TALLY.finished.add(("novafabric", name, "in-process"))


def run_class(name: str, seed: Path, target: Path) -> None:
    original = read_capsule(seed)
    strategy = classes(seed)[name]

    @settings(max_examples=examples(COSTLY.get(name, PER_CLASS)))
    @given(strategy)
    def one(change: Change) -> None:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(seed, target, symlinks=True)
        change(target)
        outcome = exercise(target, original)
        TALLY.count(("novafabric", name, "in-process"), bool(outcome.refused))

    one()
