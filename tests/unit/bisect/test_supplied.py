"""A value supplied with --env for a variable recorded by name only fills it in where it was set
(issue 30): the capsule that recorded it set gets it, the one that recorded it unset keeps it
unset, so bisect can find the variable; a variable whose value was recorded is overridden
everywhere, as before. One rule (build/planner.py's supplied_here), for replay, bisect, the farm."""
from __future__ import annotations

import json
from pathlib import Path

from runner.bisect.env import bisect_capsules, fill_only_of
from runner.bisect.trial import BisectSettings
from runner.build.plan import EnvSetting, PlanOptions
from runner.build.planner import fill_only, make_plan, supplied_here
from runner.capsules import read_capsule
from runner.capsules.model import Capsule, EnvFact, FrozenMap
from runner.capsules.trust import Trust
from runner.config import Settings
from runner.replay import Replayer, ReplayOptions
from runner.replay.image import BuiltImage
from runner.replay.runenv import command_env
from runner.verdict.judge import expected_of

from tests.integration.helpers import twin_capsule, write_json
from tests.unit.bisect.fakes import FakeProgress, RuleReplayer
from tests.unit.fake_engine import FakeEngine

SUPPLIED = (("TTY_COMPATIBLE", "1"), ("TZ", "UTC"))


def twin(tmp: Path, name: str, exit_code: int, env: dict[str, object]) -> Path:
    data = twin_capsule(["python3", "-c", "pass"], "FAIL tests/test_console.py" if exit_code else "", exit_code,
                        env=env)
    data["redaction"]["valuesIncluded"] = sorted(k for k, v in env.items() if isinstance(v, dict) and "value" in v)
    return write_json(tmp / name, data)


def pair(tmp: Path) -> tuple[Path, Path]:
    """bad: TTY_COMPATIBLE recorded by name only (twin's rule for a variable off its list), TZ
    New York; good: TTY_COMPATIBLE not recorded at all, TZ UTC."""
    bad = twin(tmp, "bad.json", 1, {"TTY_COMPATIBLE": {"state": "set"},
                                    "TZ": {"state": "set", "value": "America/New_York"}})
    good = twin(tmp, "good.json", 0, {"TZ": {"state": "set", "value": "UTC"}})
    return bad, good


def test_only_a_name_recorded_without_its_value_fills_in(tmp_path: Path) -> None:
    bad, good = (read_capsule(p) for p in pair(tmp_path))
    assert fill_only([bad, good], SUPPLIED) == {"TTY_COMPATIBLE"}  # TZ's value was recorded: an override
    assert fill_only([good], SUPPLIED) == frozenset()
    fill = frozenset({"TTY_COMPATIBLE"})
    assert supplied_here(bad, "TTY_COMPATIBLE", fill) and not supplied_here(good, "TTY_COMPATIBLE", fill)
    assert supplied_here(bad, "TZ", fill) and supplied_here(good, "TZ", fill)  # overridden everywhere
    absent = Capsule(good.provenance, good.command, env=FrozenMap({"TTY_COMPATIBLE": EnvFact("TTY_COMPATIBLE", "absent")}))
    assert not supplied_here(absent, "TTY_COMPATIBLE", fill)
    assert supplied_here(absent, "TTY_COMPATIBLE", frozenset())  # alone (replay CAPSULE --env): supplied


def test_the_plans_fill_in_where_it_was_set_and_keep_it_unset_elsewhere(tmp_path: Path) -> None:
    paths = pair(tmp_path)
    fill = fill_only_of(paths, Trust(allow_unverified=True), SUPPLIED)
    assert fill == {"TTY_COMPATIBLE"}
    opts = PlanOptions(env_overrides=SUPPLIED, fill_only=fill)
    bad, good = (make_plan(read_capsule(p), Settings(), opts) for p in paths)
    assert bad.env["TTY_COMPATIBLE"] == EnvSetting("supplied") and good.env["TTY_COMPATIBLE"] == EnvSetting("withheld")
    assert bad.env["TZ"] == good.env["TZ"] == EnvSetting("supplied")
    row = next(r for r in good.fidelity if r.fact == "env TTY_COMPATIBLE")
    assert (row.replayed, row.status) == ("unset", "exact") and "recorded it unset, so it stays unset" in row.why
    assert "1" not in json.dumps([good.env["TTY_COMPATIBLE"].value, bad.env["TTY_COMPATIBLE"].value])
    # without the session's rule (replay of one capsule), a supplied name reaches every run, as before
    assert make_plan(read_capsule(paths[1]), Settings(), PlanOptions(env_overrides=SUPPLIED)).env[
        "TTY_COMPATIBLE"] == EnvSetting("supplied")


def test_a_withheld_variable_gets_no_supplied_value_and_is_removed_from_the_image_env(tmp_path: Path) -> None:
    paths = pair(tmp_path)
    opts = PlanOptions(env_overrides=SUPPLIED, fill_only=frozenset({"TTY_COMPATIBLE"}))
    bad, good = (make_plan(read_capsule(p), Settings(), opts) for p in paths)
    env, argv = command_env(good, {"TTY_COMPATIBLE": "0", "PATH": "/usr/bin"}, [("TTY_COMPATIBLE", "1"),
                                                                              ("TZ", "UTC")])
    assert ("TTY_COMPATIBLE", "1") not in env and ("TZ", "UTC") in env
    assert argv[:3] == ("/usr/bin/env", "-u", "TTY_COMPATIBLE")
    replayer = Replayer(ReplayOptions(secret_env=SUPPLIED), engine=FakeEngine())  # the real run spec
    try:
        assert ("TTY_COMPATIBLE", "1") in replayer.run_spec(bad, BuiltImage("img:1", False, 0.0)).env
        assert "TTY_COMPATIBLE" not in dict(replayer.run_spec(good, BuiltImage("img:1", False, 0.0)).env)
    finally:
        replayer.close()


def test_bisect_finds_a_variable_recorded_by_name_only(tmp_path: Path) -> None:
    paths = pair(tmp_path)
    opts = PlanOptions(env_overrides=SUPPLIED[:1], fill_only=fill_only_of(paths, Trust(allow_unverified=True),
                                                                          SUPPLIED[:1]))
    capsules = {str(p.name): (lambda c: (c, make_plan(c, Settings(), opts)))(read_capsule(p)) for p in paths}
    recorded = expected_of(capsules["bad.json"][0]).signature

    def rule(plan, n):  # type: ignore[no-untyped-def]
        # rich's suite fails when the run gets TTY_COMPATIBLE=1 (the supplied value reaches the run)
        return (1, recorded) if plan.env.get("TTY_COMPATIBLE") == EnvSetting("supplied") else (0, "exit0:x")

    fake = RuleReplayer(capsules, rule)
    result = bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(), FakeProgress())
    assert (result.status, result.minimal) == ("found", ("env:TTY_COMPATIBLE",))
    candidate = next(c for c in result.candidates if c.key == "env:TTY_COMPATIBLE")
    assert (candidate.good, candidate.bad) == (None, "(supplied)")
    assert "env:TTY_COMPATIBLE" not in {n.key for n in result.not_varied}


def test_a_farm_night_fills_in_where_it_was_set_and_keeps_it_unset_elsewhere(tmp_path: Path) -> None:
    """The same rule in the farm (issue 30): the night's --env TTY_COMPATIBLE=1 reaches the capsule that
    recorded it by name only, not the one that did not record it set."""
    from runner.farm.ids import content_id
    from runner.farm.prepare import Prepared, prepare
    from runner.farm.store import NightEntry
    from runner.replay import Progress, Replayer, ReplayOptions

    paths = pair(tmp_path)
    replayer = Replayer(ReplayOptions(secret_env=SUPPLIED, trust=Trust(allow_unverified=True)), Progress(quiet=True),
                        engine=FakeEngine())
    fill = fill_only([read_capsule(p) for p in paths], SUPPLIED)
    bad, good = (prepare(NightEntry(content_id(p), str(p), "twin"), replayer, None, None, Trust(allow_unverified=True),
                         None, fill) for p in paths)
    assert isinstance(bad, Prepared) and isinstance(good, Prepared)
    assert bad.plan.env["TTY_COMPATIBLE"].state == "supplied"
    assert good.plan.env["TTY_COMPATIBLE"].state == "withheld"
    assert bad.plan.env["TZ"].state == good.plan.env["TZ"].state == "supplied"  # a recorded value: overridden
