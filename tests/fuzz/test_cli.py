"""A few hundred mutated capsules through the `replay` command itself (in-process, stdout and
stderr as strict UTF-8): inspect, inspect --json, verify, diff, render."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.examples import CI, CI_RICH, MINIMAL, NOVA, TWIN, TZ_CAPSULE

from tests.fuzz import mutate
from tests.fuzz.conftest import examples
from tests.fuzz.harness import MAX_SECONDS, Broken, judge_line, run_cli
from tests.fuzz.tally import TALLY

COMMANDS = (["inspect"], ["inspect", "--json", "--all"], ["verify"], ["verify", "--json"], ["render"], ["diff"])
LIGHT = {k: v for k, v in mutate.TREE_CLASSES.items() if k not in ("huge strings", "many entries")}


def json_cases(seed: Path) -> st.SearchStrategy[str]:
    doc = json.loads(seed.read_text(encoding="utf-8"))
    text = mutate.json_text(doc)
    return st.one_of(*(make(doc).map(mutate.json_text) for make in LIGHT.values()),
                     mutate.duplicates(text), mutate.number_literals(text))


def check_command(args: list[str], target: Path, other: Path) -> bool:
    full = [*args, str(target), *([str(other)] if args == ["diff"] else [])]
    rc, out, err, took = run_cli(full)
    if took > MAX_SECONDS:
        raise Broken(f"replay {' '.join(args)} took {took:.1f} s")
    if rc not in (0, 1, 2):
        raise Broken(f"replay {' '.join(args)}: exit {rc}: {err[:400]!r}")
    if "internal error" in err or "Traceback" in err:
        raise Broken(f"replay {' '.join(args)}: {err[:400]!r}")
    if "\x1b" in out or "\x1b" in err:
        raise Broken(f"replay {' '.join(args)}: a raw ESC reached the terminal")
    if rc == 2:
        lines = [line for line in err.splitlines() if line.startswith("replay: error:")]
        if len(lines) != 1 or len(err.strip().splitlines()) != 1:
            raise Broken(f"replay {' '.join(args)}: exit 2 without exactly one error line: {err[:400]!r}")
        judge_line(" ".join(args), target, lines[0].removeprefix("replay: error: "))
    return rc == 2


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-cli")


@pytest.mark.parametrize(("fmt", "seed"), [("twin", TWIN), ("twin", TZ_CAPSULE), ("codeinstances", CI),
                                           ("codeinstances", CI_RICH)],
                         ids=["twin-echarts", "twin-tz-clock", "codeinstances", "codeinstances-errors-and-binary"])
def test_mutated_capsules_through_the_cli(fmt: str, seed: Path, work: Path) -> None:
    target = work / f"{seed.stem}.json"

    @settings(max_examples=examples(70))
    @given(json_cases(seed), st.sampled_from(COMMANDS))
    def one(text: str, args: list[str]) -> None:
        target.write_bytes(text.encode("utf-8", "surrogatepass"))
        TALLY.count((fmt, "mixed", "CLI"), check_command(args, target, seed))

    one()
    TALLY.finished.add((fmt, "mixed", "CLI"))


@pytest.mark.parametrize("seed", [MINIMAL, NOVA], ids=["minimal-run", "sealed"])
def test_mutated_novafabric_directories_through_the_cli(seed: Path, work: Path) -> None:
    import yaml

    doc = yaml.safe_load((seed / "capsule.yaml").read_text())
    target = work / f"nova-{seed.name}"

    @settings(max_examples=examples(60))
    @given(st.one_of(*(make(doc) for make in LIGHT.values())), st.sampled_from(COMMANDS))
    def one(new: object, args: list[str]) -> None:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(seed, target)
        (target / "capsule.yaml").write_text(yaml.safe_dump(new, allow_unicode=False, width=10_000))
        TALLY.count(("novafabric", "mixed", "CLI"), check_command(args, target, seed))

    one()
    TALLY.finished.add(("novafabric", "mixed", "CLI"))
