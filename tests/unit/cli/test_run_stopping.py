"""`replay CAPSULE`'s stopping options reach the replay as given, and the ones that do not go
together are one usage line, exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli.main import main
from runner.replay import ReplayOptions

from tests.examples import TZ_CAPSULE


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[ReplayOptions]:
    from runner.cli import replaying as run_cli

    got: list[ReplayOptions] = []

    def fake_replay(path: Path, options: ReplayOptions, progress: object, engine: object = None) -> object:
        got.append(options)
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cli, "replay_capsule", fake_replay)
    return got


def test_by_default_a_replay_stops_when_decided(seen: list[ReplayOptions]) -> None:
    main([str(TZ_CAPSULE)])
    (opts,) = seen
    sampling = opts.sampling
    assert (opts.attempts, sampling.exactly, sampling.least, sampling.most, sampling.budget_s, sampling.confidence) == (
        None, None, 3, 20, None, 0.95)


def test_the_budget_takes_a_duration_and_the_confidence_a_number(seen: list[ReplayOptions]) -> None:
    main([str(TZ_CAPSULE), "--max-attempts", "40", "--budget", "10m", "--confidence", "0.99"])
    main([str(TZ_CAPSULE), "-n", "5"])
    assert [(o.sampling.most, o.sampling.budget_s, o.sampling.confidence, o.sampling.exactly) for o in seen] == [
        (40, 600.0, 0.99, None), (20, None, 0.95, 5)]


@pytest.mark.parametrize(("args", "said"), [
    (["-n", "3", "--max-attempts", "9"], "does not go with --max-attempts or --budget"),
    (["--attempts", "3", "--budget", "5m"], "does not go with --max-attempts or --budget"),
    (["--budget", "soon"], "not a duration"),
    (["--confidence", "1.5"], "--confidence"),
])
def test_options_that_do_not_go_together_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], seen: list[ReplayOptions],
                                                            args: list[str], said: str) -> None:
    assert main([str(TZ_CAPSULE), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and seen == []
