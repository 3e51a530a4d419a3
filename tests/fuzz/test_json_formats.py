"""twin and CodeInstances capsules, mutated class by class, through every in-process step."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.capsules import read_capsule
from tests.examples import CI, TWIN, TZ_CAPSULE

from . import mutate
from .conftest import examples
from .harness import exercise
from .tally import TALLY

SEEDS = {"twin": (TWIN, TZ_CAPSULE), "codeinstances": (CI,)}
# Expensive classes (megabyte strings, thousands of entries) get fewer cases.
COSTLY = {"huge strings": 25, "many entries": 25}
PER_CLASS = 100

Make = Callable[[Any, str], st.SearchStrategy[str | bytes]]
TEXT_CLASSES: dict[str, Make] = {
    "duplicate members": lambda doc, text: mutate.duplicates(text),
    "case-variant members": lambda doc, text: mutate.case_variants(text),
    "number and nesting literals": lambda doc, text: mutate.number_literals(text),
    "truncated and garbage bytes": lambda doc, text: mutate.raw_bytes(text),
}
CI_CLASSES: dict[str, Make] = {"broken base64": lambda doc, text: broken_base64(doc)}


def broken_base64(doc: Any) -> st.SearchStrategy[str]:
    """A body or random value that is not base64: bad padding, alphabet, whitespace, url-safe form."""
    spots = [p for p in mutate.paths(doc) if p and p[-1] in ("base64", "value")] or [()]
    bad = st.sampled_from(("a", "ab=", "a===", "@@@@", "aGVsbG8", "aGV sbG8=", "aGVs\nbG8=", "-_-_", "====", "\ud800A=="))
    return st.tuples(st.sampled_from(spots), bad).map(lambda t: mutate.json_text(mutate.replaced(doc, *t)))


def _tree(make: Callable[[Any], st.SearchStrategy[Any]]) -> Make:
    return lambda doc, text: make(doc).map(mutate.json_text)


def classes(fmt: str) -> dict[str, Make]:
    tree: dict[str, Make] = {name: _tree(f) for name, f in mutate.TREE_CLASSES.items()}
    return {**tree, **TEXT_CLASSES, **(CI_CLASSES if fmt == "codeinstances" else {})}


CASES = [(fmt, name) for fmt in SEEDS for name in classes(fmt)]


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-json")


@pytest.mark.parametrize(("fmt", "name"), CASES, ids=[f"{f}-{n}" for f, n in CASES])
def test_mutated_capsules_hold(fmt: str, name: str, work: Path) -> None:
    for i, seed in enumerate(SEEDS[fmt]):
        run_class(fmt, name, seed, work / f"{fmt}-{i}-{name.replace(' ', '-')}.json")
    TALLY.finished.add((fmt, name, "in-process"))


def run_class(fmt: str, name: str, seed: Path, target: Path) -> None:
    doc = json.loads(seed.read_text(encoding="utf-8"))
    original = read_capsule(seed)
    strategy = classes(fmt)[name](doc, mutate.json_text(doc))

    @settings(max_examples=examples(COSTLY.get(name, PER_CLASS)))
    @given(strategy)
    def one(mutated: str | bytes) -> None:
        data = mutated if isinstance(mutated, bytes) else mutated.encode("utf-8", "surrogatepass")
        target.write_bytes(data)
        outcome = exercise(target, original)
        TALLY.count((fmt, name, "in-process"), bool(outcome.refused))

    one()
