"""bisect's progress: each trial with its result and the runs spent; `bisect --env` as on `replay`."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from runner.bisect.env import bisect_capsules
from runner.bisect.trial import BisectSettings
from runner.cli.main import main
from tests.examples import TZ_CAPSULE
from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.world import FakeReplayer, fails_when, tz_of


def test_each_trial_says_its_result_and_the_runs_spent() -> None:
    progress = FakeProgress()
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"))
    result = bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(None, 1, max_runs=50), progress)
    lines = [s for s in progress.said if re.search(r"\(\d+ runs?; \d+ of at most 50 in all\)$", s)]
    assert len(lines) == len(result.trials)
    assert lines[0] == "good: not-reproduced (1 run; 1 of at most 50 in all)"
    assert any(": reproduced (" in line for line in lines)
    spent = [int(m.group(1)) for line in lines if (m := re.search(r"; (\d+) of at most", line))]
    assert spent == sorted(spent) and spent[-1] == len(fake.ran)  # counts up to every run


def test_bisect_takes_env_as_replay_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.cli import bisect as bisect_cli

    seen: list[Any] = []

    def fake(loader: Any, *args: Any) -> Any:
        seen.append(loader.options)  # the loader's options: the replayer's too
        raise KeyboardInterrupt

    monkeypatch.setattr(bisect_cli, "_bisect", fake)
    main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--env", "API_TOKEN=s3cret", "--timeout", "2m"])
    options = seen[0]
    assert options.plan.env_overrides == (("API_TOKEN", "s3cret"),)
    assert options.secret_env == (("API_TOKEN", "s3cret"),) and options.timeout == 120.0


def test_bisect_env_is_checked_like_replay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--env", "=x"]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_bisect_takes_its_confidence_and_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.cli import bisect as bisect_cli

    seen: list[Any] = []

    def fake(loader: Any, replayer: Any, bad: Any, good: Any, settings: Any, *args: Any) -> Any:
        seen.append(settings)
        raise KeyboardInterrupt

    monkeypatch.setattr(bisect_cli, "_bisect", fake)
    main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--confidence", "0.99", "--max-runs", "40",
          "--budget", "1h30m"])
    main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--attempts", "3"])
    asked, defaults = seen
    assert (asked.confidence, asked.max_runs, asked.budget_s, asked.attempts) == (0.99, 40, 5400.0, None)
    assert (defaults.confidence, defaults.max_runs, defaults.budget_s, defaults.attempts) == (0.95, 300, None, 3)
    assert asked.rules.give_up_after() == 21 and defaults.rules.give_up_after() == 3  # --attempts caps it


def test_a_confidence_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE), "--confidence", "1"]) == 2
    assert "--confidence" in capsys.readouterr().err
