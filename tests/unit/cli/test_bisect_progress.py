"""bisect's progress: each trial with its result and how many are left; `bisect --env` as on `replay`."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from runner.bisect.env import bisect_capsules
from runner.bisect.trial import BisectSettings, fact_estimate, line_estimate
from runner.cli.main import main
from tests.examples import TZ_CAPSULE
from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.test_env import FakeReplayer, fails_when, tz_of


def test_each_trial_says_its_result_and_what_is_left() -> None:
    progress = FakeProgress()
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"))
    result = bisect_capsules(fake, Path("bad.json"), Path("good.json"), BisectSettings(1, 1), progress)
    lines = [s for s in progress.said if re.match(r"trial \d+ \(", s)]
    assert len(lines) == len(result.trials)
    assert lines[0] == f"trial 1 (good): not-reproduced; about {fact_estimate(4) - 1} left"
    assert any(": reproduced;" in line for line in lines)
    left = [int(m.group(1)) for line in lines if (m := re.search(r"about (\d+) left", line))]
    assert left == sorted(left, reverse=True)  # counts down


@pytest.mark.parametrize("n,expected", [(0, 2), (1, 2), (2, 4), (4, 6), (5, 8)])
def test_fact_estimate(n: int, expected: int) -> None:
    assert fact_estimate(n) == expected


def test_line_estimate() -> None:
    assert [line_estimate(n) for n in (1, 2, 3, 9)] == [2, 2, 3, 5]


def test_bisect_takes_env_as_replay_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.cli import bisect as bisect_cli

    seen: list[Any] = []

    def fake(replayer: Any, *args: Any) -> Any:
        seen.append(replayer.options)
        raise KeyboardInterrupt

    monkeypatch.setattr(bisect_cli, "_bisect", fake)
    main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--env", "API_TOKEN=s3cret", "--timeout", "2m"])
    options = seen[0]
    assert options.plan.env_overrides == (("API_TOKEN", "s3cret"),)
    assert options.secret_env == (("API_TOKEN", "s3cret"),) and options.timeout == 120.0


def test_bisect_env_is_checked_like_replay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--env", "=x"]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err
