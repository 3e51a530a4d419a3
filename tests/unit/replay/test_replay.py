"""Verdict rules and the build retry (the engine faked only to inject faults)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.capsules.model import Body
from runner.engine import BuildEvent, Containment, Engine
from runner.engine.buildlog import build_failure
from runner.errors import BuildFailed
from runner.replay import (Attempt, BuiltImage, Expected, Progress, Replayer, ReplayOptions, classify, expected_of,
                           judge)
from runner.replay import image as images
from runner.replay.replayer import KEPT_CAPS

from tests.unit.fake_engine import FakeEngine

ROOT = Path(__file__).resolve().parents[3]
TZ = ROOT / "examples" / "tz-clock" / "capsule.json"
FETCH = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"


def att(code: int | None, signature: str = "", stdout: bytes = b"", timed_out: bool = False) -> Attempt:
    return Attempt(code, None, signature, (), 0.1, timed_out, stdout)


def test_expected_of_a_twin_failure_uses_the_recorded_signature() -> None:
    exp = expected_of(read_capsule(TZ))
    assert exp.failed and exp.exit_code == 1
    assert exp.signature == "exit1:799fec462e83a86f" and exp.signature_source == "recorded"


def test_expected_falls_back_to_the_output_tail_when_the_recorded_signature_is_another_rule() -> None:
    capsule = read_capsule(TZ)
    failure = dataclasses.replace(capsule.command.failure, signature="exit1:0000000000000000")
    capsule = dataclasses.replace(capsule, command=dataclasses.replace(capsule.command, failure=failure))
    exp = expected_of(capsule)
    assert exp.signature == "exit1:799fec462e83a86f"
    assert exp.signature_source.startswith("recomputed")


def test_expected_of_codeinstances_compares_stdout() -> None:
    exp = expected_of(read_capsule(FETCH))
    assert not exp.failed and exp.stdout == b"hello\n"


@pytest.mark.parametrize("attempt,kind", [
    (att(1, "exit1:abc"), "recorded"),
    (att(1, "exit1:other"), "other"),
    (att(2, "exit2:abc"), "other"),
    (att(0, "exit0:x"), "pass"),
    (att(None, timed_out=True), "inconclusive"),
])
def test_classify_against_a_recorded_failure(attempt: Attempt, kind: str) -> None:
    assert classify(Expected(True, 1, None, "exit1:abc"), attempt) == kind


def test_classify_a_recorded_pass_checks_stdout_line_by_line_normalised() -> None:
    exp = Expected(False, 0, None, None, (), b"hello\n")
    assert classify(exp, att(0, stdout=b"hello\n")) == "recorded"
    assert classify(exp, att(0, stdout=b"hello")) == "recorded"  # the same line (tests/unit/verdict: durations...)
    assert classify(exp, att(0, stdout=b"bye\n")) == "other"
    assert classify(exp, att(1, stdout=b"hello\n")) == "other"


def _judged(kinds: list[str], failed: bool = True) -> str:
    attempts = [dataclasses.replace(att(1), classification=k) for k in kinds]  # type: ignore[arg-type]
    return judge(Expected(failed, 1, None, "s"), attempts)


def test_judge_verdicts() -> None:
    assert _judged(["recorded"] * 3) == "reproduced"
    assert _judged(["pass"] * 3) == "not-reproduced"
    assert _judged(["other"] * 3) == "different-failure"
    assert _judged(["recorded", "pass", "recorded"]) == "flaky"
    assert _judged(["inconclusive"] * 2) == "inconclusive"
    assert _judged(["other"], failed=False) == "not-reproduced"
    assert _judged(["recorded", "inconclusive", "recorded"]) == "reproduced"  # a timeout is no run of the rate
    assert _judged(["pass", "other", "pass"]) == "different-failure"  # never as recorded: not "flaky"


class FlakyMirrorEngine(FakeEngine):
    """Fault injection: the first build hits a mirror timeout, the second succeeds."""

    def __init__(self, transient: bool) -> None:
        super().__init__()
        self.calls = 0
        self.transient = transient

    def build(self, ctx: Path, tag: str, labels: dict[str, str], network: str = "default",  # type: ignore[override]
              timeout_s: float | None = None):
        self.calls += 1
        if self.calls == 1:
            tail = "E: Failed to fetch http://deb.debian.org/x  Temporary failure resolving 'deb.debian.org'" \
                if self.transient else "npm ERR! 404 Not Found"
            raise build_failure("apt-get", [tail])  # as the engine makes it: the log decides whether it is a hiccup
        yield BuildEvent("done", image_id="sha256:1", steps_run=3)


def test_a_transient_build_failure_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "wait_exponential", lambda **kw: (lambda rs: 0))
    engine = FlakyMirrorEngine(transient=True)
    assert images.build(engine, tmp_path, "t:1", {}, lambda s: None, False) == 3
    assert engine.calls == 2


def test_a_real_build_failure_is_not_retried(tmp_path: Path) -> None:
    engine = FlakyMirrorEngine(transient=False)
    with pytest.raises(BuildFailed):
        images.build(engine, tmp_path, "t:1", {}, lambda s: None, False)
    assert engine.calls == 1


def test_the_engine_is_a_protocol_the_fake_satisfies() -> None:
    assert isinstance(FakeEngine(), Engine)


def test_every_container_of_a_replay_gets_the_containment_policy(tmp_path: Path) -> None:
    engine = FakeEngine()
    replayer = Replayer(ReplayOptions(memory="1g", pids_limit=77), Progress(), engine=engine)
    spec = replayer.run_spec(_plan(), BuiltImage("img:1", False, 0.0))
    assert spec.containment == Containment(memory="1g", pids_limit=77, cap_drop=("ALL",), cap_add=KEPT_CAPS)
    assert replayer.containment().no_new_privileges
    replayer.close()
    assert engine.cleaned == [replayer.label]


def test_the_builder_setting_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.config import Settings

    monkeypatch.setenv("REPLAY_BUILDER", "classic")
    assert Replayer(settings=Settings())._engine.builder == "classic"
    assert Replayer(ReplayOptions(builder="buildkit"), settings=Settings())._engine.builder == "buildkit"


def _plan():
    from runner.build.sources.baseimage import DEFAULT
    from runner.build.plan import Plan

    return Plan(title="t", capsule_id="c", base=DEFAULT, argv=("true",))


def test_body_data_decodes_text_and_base64() -> None:
    assert Body(text="hé").data == "hé".encode()
    assert Body(base64="AAE=").data == b"\x00\x01"


def test_the_reports_read_back_stay_inside_the_working_directory() -> None:
    """Report paths are capsule values: joined to the working directory, kept only inside it."""
    from runner.verdict.attempted import report_paths

    assert report_paths("/work/repo", ("reports/junit.xml", "./a/../b.xml", "../../etc/shadow", "/etc/passwd",
                                       "x\0y.xml", "", "reports/junit.xml")) == (
        "/work/repo/reports/junit.xml", "/work/repo/b.xml")
    assert report_paths(None, ("junit.xml",)) == ()
