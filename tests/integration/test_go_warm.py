"""Go warm from the first attempt, never a cached result (issue 36), on the real engine.

The image compiles the standard library and the recorded `go test`'s packages ahead (build/gowarm.py);
every attempt shares the machine's build cache for its toolchain, filled from the image
(replay/toolcache.GoCache). A test result is never taken from it: Go caches a passing result keyed on
the variables a test reads through os.Getenv, and the time package reads TZ past it, so a pass under
TZ=UTC would answer for a run under America/New_York, where the test fails.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.build.plan import PlanOptions
from runner.cli.main import main
from runner.replay import Progress, Replayer, ReplayOptions, expected_of
from runner.replay.loading import Loader
from tests.integration.helpers import ROOT, env_facts, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.bisecting import passed, record_failure

pytestmark = pytest.mark.integration

GO_DAY = ROOT / "tests" / "cases" / "toolchains" / "go-day"  # the standard library only
GO = "1.22.10"  # test_toolchains' Go: its image layers are shared


def day_capsules(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(fails under New York, passes under UTC, repo): one image, TZ a run-time fact."""
    repo = tmp_path / "repo"
    commit = git_repo(repo, {p.name: p.read_text() for p in GO_DAY.iterdir()})

    def capsule(tz: str, exit_code: int) -> dict[str, Any]:
        data = twin_capsule(["go", "test", "./..."], "", exit_code, repo=repo_fact(str(repo), commit),
                            env=env_facts(TZ=tz))
        data["command"]["failure"] = None
        data["runtimes"] = {"go": GO}
        return data

    bad = write_json(tmp_path / "bad.json", capsule("America/New_York", 1))
    record_failure(bad)
    good = write_json(tmp_path / "good.json", passed(capsule("UTC", 0)))
    return bad, good, repo


def test_a_failing_go_test_fails_on_every_attempt_with_a_warm_cache(engine: Any, tmp_path: Path) -> None:
    bad, good, repo = day_capsules(tmp_path)
    replayer = Replayer(ReplayOptions(plan=PlanOptions(repo=str(repo))), Progress())
    try:
        loader = Loader(replayer.options)
        (bad_capsule, bad_plan), (_, good_plan) = loader.load(bad), loader.load(good)
        expected = expected_of(bad_capsule)
        image = replayer.image(bad_plan)
        assert replayer.image(good_plan).ref == image.ref  # TZ reaches the run only: one image, one cache
        # the pass under UTC first: without -count=1 Go would cache it, and answer the New York runs with it
        (utc,), _ = replayer.attempts(good_plan, image, expected, 1)
        assert utc.exit_code == 0, utc.output_tail
        ny, _ = replayer.attempts(bad_plan, image, expected, 2)
        assert [a.classification for a in ny] == ["recorded", "recorded"], [a.output_tail for a in ny]
        assert not any("(cached)" in a.output_tail for a in ny)
        # the attempts shared the machine's volume for this toolchain, filled from the image's standard library
        volume = f"replay-gocache-go{GO}"
        listed = engine.client.containers.run(image.ref, ["sh", "-c", "find /cache -name '*-d' | wc -l"], remove=True,
                                              network_mode="none", volumes={volume: {"bind": "/cache", "mode": "ro"}},
                                              labels={"replay": replayer.label}).decode()
        assert int(listed.strip()) > 500, listed  # the standard library alone is a few thousand outputs
    finally:
        replayer.close()
    # the machine's cache: the replay's cleanup leaves it, as it leaves BuildKit's
    assert engine.client.volumes.get(volume).attrs["Labels"] == {"replay": "toolcache"}


def test_replay_says_which_caches_were_warm(engine: Any, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad, _, repo = day_capsules(tmp_path)
    rc = main([str(bad), "--repo", str(repo), "-n", "2", "--json"])
    result = json.loads(capsys.readouterr().out)["result"]
    assert (rc, result["verdict"]) == (0, "reproduced")
    rows = {r["fact"]: r for r in result["fidelity"]}
    warm = rows["cache Go build"]
    assert warm["replayed"].startswith("warm: the standard library (") and "and 1 package (" in warm["replayed"], warm
    assert "did not compile" not in warm["why"]
    assert (rows["go test results"]["replayed"], rows["go test results"]["status"]) == \
        ("never cached: -count=1", "approximated")
    assert "fill Go's build cache from the image's compiled packages" in {s["name"] for s in result["steps"]}
