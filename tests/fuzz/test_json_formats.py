"""twin and CodeInstances capsules, mutated class by class, through every in-process step."""
from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.capsules import read_capsule
from tests.examples import CI, CI_RICH, TWIN, TZ_CAPSULE

from tests.fuzz import mutate
from tests.fuzz.conftest import examples
from tests.fuzz.harness import exercise
from tests.fuzz.tally import TALLY

SEEDS = {"twin": (TWIN, TZ_CAPSULE), "codeinstances": (CI, CI_RICH)}
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
CI_CLASSES: dict[str, Make] = {
    "broken base64": lambda doc, text: broken_base64(doc),
    "clock values (UTC offsets, leap seconds, far years)": lambda doc, text: clock_values(doc),
    "random values": lambda doc, text: random_values(doc),
}


def _bodies_and_randoms(doc: Any) -> list[mutate.Path_]:
    """Where base64 lives: a body's "base64", a random value's "value" (a text body can become one)."""
    found = []
    for p in mutate.paths(doc):
        node = mutate.get(doc, p)
        if isinstance(node, dict) and ("base64" in node or "text" in node) and p and p[-1] in ("body", "stdout", "stderr"):
            found.append(p)
        elif isinstance(node, dict) and node.get("kind") == "random":
            found.append((*p, "value"))
    return found or [("values",)]


def broken_base64(doc: Any) -> st.SearchStrategy[str]:
    """A body or random value that is not base64: bad padding, alphabet, whitespace, cut short, url-safe."""
    def at(where: mutate.Path_) -> st.SearchStrategy[str]:
        node = mutate.get(doc, where) if where[-1] != "value" else None
        if isinstance(node, dict):  # a body: its base64 (or its text, encoded) damaged
            raw = node.get("base64") or base64.b64encode(str(node.get("text", "")).encode()).decode() or "AA=="
            return mutate.broken_base64(raw).map(lambda bad: mutate.json_text(mutate.replaced(doc, where, {"base64": bad})))
        if where[-1] == "value":
            raw = mutate.get(doc, where)
            return mutate.broken_base64(raw).map(lambda bad: mutate.json_text(mutate.replaced(doc, where, bad)))
        return st.just(mutate.json_text(doc))
    return st.one_of(*(at(w) for w in _bodies_and_randoms(doc)))


def _values(doc: Any) -> list[int]:
    return list(range(len(doc.get("values") or []))) or [0]


def clock_values(doc: Any) -> st.SearchStrategy[str]:
    """A recorded clock value replaced (or a clock value added first) by an odd time: the first
    clock value starts the replayed program's clock and names when the run was recorded."""
    def put(i: int, clock: str, first: bool) -> str:
        out = copy.deepcopy(doc)
        values = [dict(v) for v in out.get("values") or []]
        if first or not values:
            values.insert(0, {"seq": 0 if values else 1, "kind": "clock", "value": clock})
        else:
            values[i % len(values)] = {**values[i % len(values)], "kind": "clock", "value": clock}
        out["values"] = values
        return mutate.json_text(out)
    return st.tuples(st.sampled_from(_values(doc)), mutate.hostile_clock(), st.booleans()).map(lambda t: put(*t))


def random_values(doc: Any) -> st.SearchStrategy[str]:
    """Recorded values of the wrong kind, seq or size: a clock value that is base64, a random one
    that is a time, any seq (0, repeated, beyond 64 bits), any bytes, a megabyte of them, thousands of values."""
    def put(i: int, how: int, seq: int, data: bytes) -> str:
        values = [dict(v) for v in doc.get("values") or []] or [{"seq": 1, "kind": "random", "value": "AA=="}]
        v = values[i % len(values)]
        encoded = base64.b64encode(data).decode()
        values[i % len(values)] = (
            {**v, "kind": "random", "value": encoded}, {**v, "kind": "random", "value": encoded, "seq": seq},
            {**v, "kind": "clock", "value": encoded}, {**v, "kind": "random", "value": "2026-10-13T08:00:00.000000000Z"},
            {**v, "kind": "Random"}, {**v, "kind": "random", "value": "A" * 1_000_000}, {**v, "seq": seq},
            {**v, "seq": values[0]["seq"]}, {**v, "value": None}, {**v, "value": seq}, {**v, "kind": "random", "value": ""},
        )[how % 11]
        if how == 11:
            values += [{"seq": n + 10, "kind": "random", "value": encoded} for n in range(5_000)]
        return mutate.json_text({**doc, "values": values})
    seqs = st.sampled_from((0, -1, 2**63, 2**64, 10**30)) | st.integers()
    return st.tuples(st.sampled_from(_values(doc)), st.integers(0, 11), seqs, st.binary(max_size=48)).map(
        lambda t: put(*t))


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
