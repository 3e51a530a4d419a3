"""NovaFabric capsule directories, mutated: their YAML files, and the directory itself
(symlinks, FIFOs, missing files, over-long file references)."""
from __future__ import annotations

import json
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
from runner.capsules.novafabric_seal import ENVELOPE, LOG_ENTRY
from tests.examples import MINIMAL, NOVA

from tests.fuzz import mutate
from tests.fuzz.conftest import examples
from tests.fuzz.harness import exercise
from tests.fuzz.tally import TALLY

SEEDS = (NOVA, MINIMAL)
FILES = ("capsule.yaml", "env.lock", "replay.yaml")
PER_CLASS = 60

# A change to a capsule directory: (file name, new bytes or None to remove), or a directory action.
Change = Callable[[Path], None]


def _dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=10_000)


def _write(name: str, text: str) -> Change:
    return lambda root: (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))


def _write_bytes(name: str, data: bytes) -> Change:
    return lambda root: (root / name).write_bytes(data)


def tree_changes(doc: Any, name: str, make: Callable[[Any], st.SearchStrategy[Any]]) -> st.SearchStrategy[Change]:
    return make(doc).map(lambda new: _write(name, _dump(new)))


def text_changes(text: str, name: str, make: Callable[[str], st.SearchStrategy[str]]) -> st.SearchStrategy[Change]:
    return make(text).map(lambda new: _write(name, new))


ULIDS = ("", "0" * 25, "0" * 27, "01JC4Q7W9Z2M5N8P3R6T1V0X4I", "01jc4q7w9z2m5n8p3r6t1v0x4b", "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
         "../../etc", "01JC4Q7W9Z2M5N8P3R6T1V0X4\u00df", "01JC4Q7W9Z2M5N8P3R6T1V0X4B\n", "\x1b[2J" * 7)


# Crockford's base32 and what it leaves out (I, L, O, U), lower case, and what is no letter at all.
ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZILOUabcz-_/. \x00\u00e9\u0663"


def bad_ulids(doc: Any) -> st.SearchStrategy[Change]:
    made = st.text(alphabet=ULID_CHARS, min_size=0, max_size=40)
    return (st.sampled_from(ULIDS) | made).map(lambda u: _write("capsule.yaml", _dump({**doc, "run_id": u})))


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


def clock_values(seed: Path) -> st.SearchStrategy[Change]:
    """An odd time where NovaFabric records one: replay.yaml's injected_now (with freeze_clock),
    env.lock's wallclock_at_start, capsule.yaml's created_at -- the clock a replay starts at."""
    docs = {name: yaml.safe_load((seed / name).read_text()) or {} for name in FILES if (seed / name).is_file()}

    def put(spot: int, clock: str, freeze: bool) -> Change:
        if spot == 0:
            policy = {**docs.get("replay.yaml", {"schema_version": "0.1.0"}), "time": {"freeze_clock": freeze,
                                                                                    "injected_now": clock}}
            return _write("replay.yaml", _dump(policy))
        if spot == 1 and "env.lock" in docs:
            env = docs["env.lock"]
            return _write("env.lock", _dump({**env, "runtime": {**(env.get("runtime") or {}), "wallclock_at_start": clock}}))
        return _write("capsule.yaml", _dump({**docs["capsule.yaml"], "created_at": clock}))
    return st.tuples(st.integers(0, 2), mutate.hostile_clock(), st.booleans()).map(lambda t: put(*t))


def seal_base64(seed: Path) -> st.SearchStrategy[Change]:
    """The DSSE envelope's payload, signature or key damaged as base64 (the legacy unpadded
    base64url form is valid and must still verify)."""
    envelope = json.loads((seed / ENVELOPE).read_text())
    sig = envelope["signatures"][0]
    spots: list[tuple[mutate.Path_, str]] = [(("payload",), envelope["payload"])]
    spots += [(("signatures", 0, key), sig[key]) for key in ("sig", "cert", "pubkey") if key in sig]

    def put(where: mutate.Path_, bad: str, as_pubkey: bool) -> Change:
        new = mutate.replaced(envelope, where, bad)
        if as_pubkey and where[-1] == "cert":  # the other way to name a signer: a PEM public key
            entry = new["signatures"][0]
            entry["pubkey"] = entry.pop("cert")
        return _write(ENVELOPE, json.dumps(new, indent=1))
    return st.one_of(*(st.tuples(st.just(w), mutate.broken_base64(v), st.booleans()).map(lambda t: put(*t))
                       for w, v in spots))


def json_tree_changes(seed: Path, names: tuple[str, ...]) -> st.SearchStrategy[Change]:
    """Tree mutations of the capsule's JSON files (the seal, its log entry, the redaction proof)."""
    light = ("types", "missing members", "extra members", "unicode", "member names", "huge numbers", "nested values")
    out = []
    for name in names:
        if (seed / name).is_file():
            doc = json.loads((seed / name).read_text())
            out += [mutate.TREE_CLASSES[c](doc).map(lambda new, n=name: _write(n, mutate.json_text(new))) for c in light]
    return st.one_of(*out)


def trace_changes(seed: Path) -> st.SearchStrategy[Change]:
    """trace.jsonl: a line mutated, truncated or replaced by garbage, or thousands of lines."""
    lines = (seed / "trace.jsonl").read_text().splitlines() or ["{}"]
    doc = json.loads(lines[0])
    tree = st.one_of(*(mutate.TREE_CLASSES[c](doc) for c in ("types", "missing members", "unicode", "huge numbers")))
    return st.one_of(
        tree.map(lambda new: _write("trace.jsonl", json.dumps(new) + "\n" + "\n".join(lines[1:]))),
        mutate.raw_bytes("\n".join(lines) + "\n").map(lambda data: _write_bytes("trace.jsonl", data)),
        st.sampled_from((100, 20_000)).map(lambda n: _write("trace.jsonl", (lines[0] + "\n") * n)),
    )


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
    out["case-variant keys at any depth"] = st.one_of(*(tree_changes(d, n, mutate.case_keys) for n, d in docs.items()))
    out["lone surrogates in YAML"] = st.one_of(*(text_changes(t, n, mutate.yaml_surrogates) for n, t in texts.items()))
    out["truncated and garbage bytes"] = st.one_of(*(
        mutate.raw_bytes(t).map(lambda data, n=n: _write_bytes(n, data)) for n, t in texts.items()))
    out["clock values (UTC offsets, leap seconds, far years)"] = clock_values(seed)
    out["bad ULIDs"] = bad_ulids(manifest)
    out["long file references"] = long_refs(manifest)
    out["redaction proof and trace"] = st.one_of(json_tree_changes(seed, ("redaction-proof.json",)), trace_changes(seed))
    if (seed / ENVELOPE).is_file():
        out["seal: broken base64"] = seal_base64(seed)
        out["seal: envelope and log entry members"] = json_tree_changes(seed, (ENVELOPE, LOG_ENTRY))
    out.update(directory_changes(seed))
    return out


NAMES = list(dict.fromkeys([*classes(MINIMAL), *classes(NOVA)]))
# Expensive classes get fewer cases; the seal's classes run on the one sealed seed, so twice as many.
CASES_OF = {"huge strings": 8, "many entries": 8, "seal: broken base64": 2 * PER_CLASS,
            "seal: envelope and log entry members": 2 * PER_CLASS}


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-nova")


@pytest.mark.parametrize("name", NAMES)
def test_mutated_capsule_directories_hold(name: str, work: Path) -> None:
    for i, seed in enumerate(SEEDS):
        if name in classes(seed):  # the seal's classes: only the sealed seed has one
            run_class(name, seed, work / f"{i}-{len(name)}")
    TALLY.finished.add(("novafabric", name, "in-process"))


def run_class(name: str, seed: Path, target: Path) -> None:
    original = read_capsule(seed)
    strategy = classes(seed)[name]

    @settings(max_examples=examples(CASES_OF.get(name, PER_CLASS)))
    @given(strategy)
    def one(change: Change) -> None:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(seed, target, symlinks=True)
        change(target)
        outcome = exercise(target, original)
        TALLY.count(("novafabric", name, "in-process"), bool(outcome.refused))

    one()
