"""`replay CAPSULE` as a use case on the fake engine: read once, plan, build, attempts, verdict.
(The real engine runs the same path in tests/integration/test_replay.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.verdict import signature as sig
from runner.engine import RunResult, RunSpec
from runner.build.plan import PlanOptions
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import from_json, to_json

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine

RECORDED_OUTPUT = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"]


def engine_that(exit_code: int, output: str) -> FakeEngine:
    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        return RunResult(exit_code, output.encode(), output.encode(), 0.5)
    return FakeEngine(run=run, images=["replay-base/debian:bookworm"])


def replay(monkeypatch: pytest.MonkeyPatch, engine: FakeEngine, **options: object):
    options.setdefault("plan", PlanOptions(repo=str(BUNDLE)))
    opts = ReplayOptions(attempts=2, **options)  # type: ignore[arg-type]
    return replay_capsule(TZ_CAPSULE, opts, Progress(), engine=engine)


@pytest.mark.usefixtures("offline_registry")
def test_the_recorded_failure_coming_back_is_reproduced(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = engine_that(1, RECORDED_OUTPUT)
    report = replay(monkeypatch, engine)
    assert report.verdict == "reproduced" and report.exit_code == 0
    assert [a.classification for a in report.attempts] == ["recorded", "recorded"]
    assert report.attempts[0].signature == sig.compute(RECORDED_OUTPUT, 1, None).signature
    attempts = [s for s in engine.runs if s.argv[:2] != ("sh", "-c")]
    assert len(attempts) == 2 and all(s.network == "none" for s in attempts)
    assert dict(attempts[0].env)["TZ"] == "America/New_York"
    assert len(engine.builds) == 1  # one image for both attempts
    assert from_json(to_json(report)) == report


@pytest.mark.usefixtures("offline_registry")
def test_by_default_a_replay_stops_when_decided_and_says_why_it_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's runs alternate fail, pass, fail...: they disagree, so more run than 3, each
    step saying why, until the rate is known; the sentence and the JSON carry the rate."""
    runs = 0

    def run(spec: RunSpec) -> RunResult:
        nonlocal runs
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        runs += 1
        out = RECORDED_OUTPUT if runs % 2 else "all good\n"
        return RunResult(1 if runs % 2 else 0, out.encode(), out.encode(), 0.5)

    said: list[str] = []

    class Console:
        def print(self, text: str, **kw: object) -> None:
            said.append(text)

    opts = ReplayOptions(plan=PlanOptions(repo=str(BUNDLE)))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(Console()),
                            engine=FakeEngine(run=run, images=["replay-base/debian:bookworm"]))
    assert report.verdict == "flaky" and len(report.attempts) == 12
    assert "replay: runs disagree: attempt 4 of up to 20 …" in said
    assert report.summary.endswith("6 passed; fails in 25–75 % of runs (95 %).")
    rate = to_json(report)["rate"]
    assert rate == {"failed": 6, "runs": 12, "low": 0.2538, "high": 0.7462, "confidence": 0.95}


@pytest.mark.usefixtures("offline_registry")
def test_a_pass_where_a_failure_was_recorded_is_not_reproduced(monkeypatch: pytest.MonkeyPatch) -> None:
    report = replay(monkeypatch, engine_that(0, "all good\n"))
    assert report.verdict == "not-reproduced" and report.exit_code == 1


@pytest.mark.usefixtures("offline_registry")
def test_supplied_values_reach_the_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = engine_that(0, "ok\n")
    report = replay(monkeypatch, engine, secret_env=(("API_TOKEN", "s3cr3t"),),
                    plan=PlanOptions(repo=str(BUNDLE), env_overrides=(("API_TOKEN", "s3cr3t"),)))
    assert ("API_TOKEN", "s3cr3t") in engine.runs[-1].env
    assert "s3cr3t" not in json.dumps(to_json(report))


def test_everything_is_cleaned_up_by_label(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    engine = engine_that(0, "")
    from runner.replay import Replayer

    r = Replayer(ReplayOptions(), Progress(), engine=engine)
    r.close()
    assert engine.cleaned == [r.label]


def test_the_verbose_stream_scrubs_a_secret_split_across_chunks() -> None:
    from runner.replay import Replayer

    said: list[str] = []

    class Streaming(FakeEngine):
        def run(self, spec: RunSpec, on_output=None) -> RunResult:  # type: ignore[no-untyped-def]
            if on_output is not None:  # the engine cuts the stream anywhere: inside the value, inside a character
                for chunk in (b"token: s3cr", b"3tvalue ok\nnext \xc3", b"\xa9 line\nlast, unended", b""):
                    on_output(chunk)
            return RunResult(0, b"", b"", 0.1)

    class Said(Progress):
        def say(self, text: str) -> None:
            said.append(text)

    r = Replayer(ReplayOptions(verbose=True, secret_env=(("API_TOKEN", "s3cr3tvalue"),)), Said(), engine=Streaming())
    r.run_one(None, RunSpec(image="img", argv=("true",)))
    assert "\n".join(said).splitlines() == ["token: [supplied value] ok", "next é line", "last, unended"]


def test_a_line_that_never_ends_is_said_in_parts_holding_back_a_supplied_values_length() -> None:
    from runner.replay.replayer import LINE_HOLD, whole_lines

    said: list[str] = []
    feed = whole_lines(said.append, keep=len("s3cr3tvalue") - 1)
    feed(b"." * (LINE_HOLD + 10) + b"s3cr")  # a progress line of dots, no newline yet
    assert said and all(set(s) == {"."} for s in said)  # said live, the value's start held back
    feed(b"3tvalue")
    feed(b"")
    assert "s3cr3tvalue" in "".join(said)  # whole in one part, where the scrub sees it


def test_the_engines_follower_ends_the_stream() -> None:
    from runner.engine.docker import _follow

    class Container:
        def logs(self, **kwargs: object) -> list[bytes]:
            return [b"one\ntw", b"o\n"]

    got: list[bytes] = []
    _follow(Container(), got.append)
    assert got == [b"one\ntw", b"o\n", b""]


@pytest.mark.usefixtures("offline_registry")
def test_a_fix_found_under_the_pin_is_confirmed_with_seeds_drawn_anew(tmp_path: Path) -> None:
    """Under its pin (GOMAXPROCS=8) the capsule's failure comes back every run and the patch makes
    those runs pass: FIXED there. Without the pin the failure comes back every other run, patched
    or not (the patch only changed what the pinned run draws): the unpinned check is the verdict."""
    data = json.loads(TZ_CAPSULE.read_text())
    data["pin"] = {"settings": {"GOMAXPROCS": "8"}, "failed": 10, "runs": 10}
    capsule = tmp_path / "pinned.json"
    capsule.write_text(json.dumps(data))
    images: list[str] = []
    runs = 0

    def run(spec: RunSpec) -> RunResult:
        nonlocal runs
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        images.append(spec.image) if spec.image not in images else None
        patched, pinned = spec.image != images[0], dict(spec.env).get("GOMAXPROCS") == "8"
        runs += 1
        fails = (not patched) if pinned else runs % 2 == 1
        out = RECORDED_OUTPUT if fails else "all good\n"
        return RunResult(1 if fails else 0, out.encode(), out.encode(), 0.5)

    patch = "diff --git a/NOTES b/NOTES\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1 @@\n+x\n"
    report = replay_capsule(capsule, ReplayOptions(plan=PlanOptions(repo=str(BUNDLE), patch=patch)), Progress(),
                            engine=FakeEngine(run=run, images=["replay-base/debian:bookworm"]))
    assert report.verdict == "not-fixed", report.notes
    assert any(n.startswith("fixed under the recorded seeds / the pin only: with them drawn anew") for n in report.notes)
