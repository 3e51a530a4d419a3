"""--keep on the fake engine: which attempt's container stays, labelled with its plan, spared by cleanup."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from runner.build.plan import PlanOptions
from runner.build.plancodec import plan_from_json
from runner.engine import KEPT_LABEL, PLAN_LABEL, USER_LABEL, RunResult, RunSpec, current_user
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import from_json, to_json

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine, kept_id

RECORDED_OUTPUT = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"]


def engine_of(outcomes: Iterator[int]) -> FakeEngine:
    """Each attempt ends with the next exit code: 1 prints the recorded failure, 0 passes."""
    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        code = next(outcomes)
        out = RECORDED_OUTPUT.encode() if code else b"ok\n"
        return RunResult(code, out, out, 0.5)
    return FakeEngine(run=run, images=["replay-base/debian:bookworm"])


def _replay(engine: FakeEngine, keep: bool = True):
    opts = ReplayOptions(attempts=3, keep=keep, plan=PlanOptions(repo=str(BUNDLE)))
    return replay_capsule(TZ_CAPSULE, opts, Progress(), engine=engine)


@pytest.mark.usefixtures("offline_registry")
def test_the_first_attempt_as_recorded_is_kept_the_others_go() -> None:
    engine = engine_of(iter([0, 1, 1]))
    report = _replay(engine)
    assert [a.classification for a in report.attempts][1:] == ["recorded", "recorded"]
    attempts = [s for s in engine.runs if s.argv[:2] != ("sh", "-c")]
    assert all(s.keep and dict(s.labels)[KEPT_LABEL] == "1" for s in attempts)
    second = kept_id([n for n, s in enumerate(engine.runs, 1) if s.argv[:2] != ("sh", "-c")][1])
    sealed = sealed_id(second)
    assert list(engine.containers) == [sealed]  # the first replaced, the third dropped, the second sealed, spared
    assert engine.spared[-1] == (sealed,)
    assert report.kept is not None and report.kept.id == sealed[:12]
    assert report.kept.command == f"replay shell --kept {sealed[:12]}"
    second = sealed
    plan = plan_from_json(json.loads(engine.containers[second][PLAN_LABEL]))
    assert plan.argv == tuple(json.loads(TZ_CAPSULE.read_text())["command"]["argv"])
    assert plan.source is None  # a --repo URL's token, a --patch: never in a label
    assert str(BUNDLE) not in engine.containers[second][PLAN_LABEL]
    assert from_json(to_json(report)) == report


@pytest.mark.usefixtures("offline_registry")
def test_when_none_ends_as_recorded_the_last_is_kept() -> None:
    engine = engine_of(iter([0, 0, 0]))
    report = _replay(engine)
    last = sealed_id(kept_id(len(engine.runs)))
    assert list(engine.containers) == [last] and report.kept is not None and report.kept.id == last[:12]


@pytest.mark.usefixtures("offline_registry")
def test_the_kept_container_is_sealed_without_the_env_values_and_carries_its_keeper() -> None:
    engine = engine_of(iter([1, 1, 1]))
    opts = ReplayOptions(attempts=3, keep=True, plan=PlanOptions(repo=str(BUNDLE)),
                         secret_env=(("API_TOKEN", "s3cr3t-value"),))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(), engine=engine)
    (sealed,) = engine.sealed
    assert sealed[0] == kept_id([n for n, s in enumerate(engine.runs, 1) if s.argv[:2] != ("sh", "-c")][0])
    assert sealed[2] == ("API_TOKEN",) and sealed[1].startswith("replay/img:kept-")
    assert report.kept is not None and report.kept.id == sealed_id(sealed[0])[:12]
    assert engine.containers[sealed_id(sealed[0])][USER_LABEL] == current_user()


def sealed_id(container: str) -> str:
    return f"5ea1{container[4:]}"


@pytest.mark.usefixtures("offline_registry")
def test_without_keep_nothing_is_kept() -> None:
    engine = engine_of(iter([1, 1, 1]))
    report = _replay(engine, keep=False)
    assert report.kept is None and engine.containers == {}
    assert not any(s.keep or KEPT_LABEL in dict(s.labels) for s in engine.runs)


@pytest.mark.usefixtures("offline_registry")
def test_a_seal_the_engine_cannot_make_leaves_the_attempts_own_container_kept() -> None:
    from runner.errors import EngineUnavailable

    engine = engine_of(iter([1, 1, 1]))

    def gone(*args: object) -> str:
        raise EngineUnavailable("the engine failed: gone")
    engine.seal = gone  # type: ignore[method-assign]
    report = _replay(engine)
    first = kept_id([n for n, s in enumerate(engine.runs, 1) if s.argv[:2] != ("sh", "-c")][0])
    assert report.kept is not None and report.kept.id == first and list(engine.containers) == [first]


@pytest.mark.usefixtures("offline_registry")
def test_a_container_still_holding_the_env_file_is_never_sealed_nor_kept() -> None:
    """The wrapper never read /.replay-env (the attempt was killed first): sealing would commit the values
    into an image, so the container is not kept, and one line says so."""
    from runner.replay.keep import SECRETS_FILE

    outcomes = iter([1, 1, 1])
    engine: FakeEngine

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        engine.put_files(kept_id(len(engine.runs)), "/", {SECRETS_FILE[1:]: b"API_TOKEN=s3cr3t-value\0"})
        code = next(outcomes)
        return RunResult(code, RECORDED_OUTPUT.encode(), RECORDED_OUTPUT.encode(), 0.5)
    engine = FakeEngine(run=run, images=["replay-base/debian:bookworm"])
    said: list[str] = []

    class Said(Progress):
        def say(self, text: str) -> None:
            said.append(text)
    opts = ReplayOptions(attempts=3, keep=True, plan=PlanOptions(repo=str(BUNDLE)),
                         secret_env=(("API_TOKEN", "s3cr3t-value"),))
    report = replay_capsule(TZ_CAPSULE, opts, Said(), engine=engine)
    assert engine.sealed == [] and not any(ref.startswith("replay/img:kept-") for ref in engine.images)
    assert report.kept is None and engine.containers == {} and engine.spared[-1] == ()
    (line,) = [s for s in said if s.startswith("--keep:")]
    assert "still holds the --env values" in line and "not kept" in line
