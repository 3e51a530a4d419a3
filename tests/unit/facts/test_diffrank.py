"""diff by evidence (issue 38): what follows from a moved HOME is shown under it, a variable
the command reads ranks first, a single differing package is named in the summary."""
from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from runner.capsules.model import Capsule, Command, EnvFact, Failure, Format, FrozenMap, Provenance, Resolved
from runner.facts.diff import diff_capsules
from runner.report.diff_view import show_diff


def capsule(path: str, home: str, rust: bool, mode: str, marked: str, failed: bool) -> Capsule:
    cmd = Command(("sh", "-c", "cargo test && node render.js"), ".", exit_code=1 if failed else 0,
                  outcome="fail" if failed else "pass", failure=Failure("exit1:0123456789abcdef") if failed else None)
    return Capsule(Provenance(Format.TWIN, "1", path), cmd,
                   runtimes=FrozenMap({"node": "20.11.1", **({"rustc": "1.80.0"} if rust else {})}),
                   tools=FrozenMap({"npm": "10.2.4", **({"cargo": "1.80.0"} if rust else {})}),
                   resolved=Resolved(node=FrozenMap({"marked": (marked,), "ms": ("2.1.3",)})),
                   env=FrozenMap({"HOME": EnvFact("HOME", "set", home, host_specific=True),
                                  "APP_MODE": EnvFact("APP_MODE", "set", mode),
                                  "NODE_OPTIONS": EnvFact("NODE_OPTIONS", "set", "--max-old-space-size=512")}))


BAD = capsule("bad.json", "/home/ci-moved", False, "fast", "4.3.0", True)
GOOD = capsule("good.json", "/home/ci", True, "fast", "4.0.10", False)


def test_tools_under_a_moved_home_follow_from_it_and_home_can_change_the_outcome() -> None:
    d = diff_capsules(BAD, GOOD)
    rows = {f.key: f for f in d.differences}
    assert rows["env:HOME"].could_change_outcome and rows["env:HOME"].evidence.startswith("tools under it differ")
    for key in ("runtime:rustc", "tool:cargo"):
        assert (rows[key].follows, rows[key].could_change_outcome) == ("env:HOME", False)
    assert "runtime:rustc" not in d.outcome_keys and "env:HOME" in d.outcome_keys


def test_the_text_ranks_by_evidence_hangs_the_followers_under_their_cause_and_names_one_package() -> None:
    out = io.StringIO()
    show_diff(BAD, GOOD, diff_capsules(BAD, GOOD), Console(file=out, width=250))
    lines = [line.strip() for line in out.getvalue().splitlines()]
    at = next(i for i, line in enumerate(lines) if line.startswith("env:HOME"))
    assert [lines[at + 1].split()[:2], lines[at + 2].split()[:2]] == [["└", "runtime:rustc"], ["└", "tool:cargo"]]
    assert "pin:node:marked: 4.3.0 → 4.0.10" in lines
    assert not any("1 package(s) differ" in line for line in lines)


def test_a_variable_the_command_line_reads_comes_before_one_nothing_points_at() -> None:
    bad = dataclasses.replace(BAD, command=dataclasses.replace(BAD.command, argv=("sh", "-c", 'test "$APP_MODE" = safe')))
    good = dataclasses.replace(GOOD, command=bad.command, env=FrozenMap({**GOOD.env,
                                                                       "APP_MODE": EnvFact("APP_MODE", "set", "safe")}))
    bad = dataclasses.replace(bad, env=FrozenMap({**bad.env, "NODE_OPTIONS": EnvFact("NODE_OPTIONS", "absent")}))
    rows = {f.key: f for f in diff_capsules(bad, good).differences}
    assert rows["env:APP_MODE"].score > rows["env:NODE_OPTIONS"].score
    assert rows["env:APP_MODE"].evidence == "command: the command line reads $APP_MODE"
