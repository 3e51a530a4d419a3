"""--keep on the fake engine: which attempt's container stays, labelled with its plan, spared by cleanup."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.plan import PlanOptions
from runner.build.plancodec import plan_from_json
from runner.engine import KEPT_LABEL, PLAN_LABEL, USER_LABEL, RunResult, RunSpec, current_user
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import from_json, to_json

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine, kept_id

RECORDED_OUTPUT = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"]


def probe(spec: RunSpec) -> bool:
    """The image-facts probe (an attempt given --env values starts with sh -c too: keep.py's reader)."""
    return spec.argv[:2] == ("sh", "-c") and spec.argv[3:4] != ("replay-env",)


def engine_of(outcomes: Iterator[int]) -> FakeEngine:
    """Each attempt ends with the next exit code: 1 prints the recorded failure, 0 passes."""
    def run(spec: RunSpec) -> RunResult:
        if probe(spec):
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
    attempts = [s for s in engine.runs if not probe(s)]
    assert all(s.keep and dict(s.labels)[KEPT_LABEL] == "1" for s in attempts)
    second = kept_id([n for n, s in enumerate(engine.runs, 1) if not probe(s)][1])
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
    assert sealed[0] == kept_id([n for n, s in enumerate(engine.runs, 1) if not probe(s)][0])
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
    first = kept_id([n for n, s in enumerate(engine.runs, 1) if not probe(s)][0])
    assert report.kept is not None and report.kept.id == first and list(engine.containers) == [first]


@pytest.mark.usefixtures("offline_registry")
def test_a_container_still_holding_the_env_file_is_never_sealed_nor_kept() -> None:
    """The wrapper never read /.replay-env (the attempt was killed first): sealing would commit the values
    into an image, so the container is not kept, and one line says so."""
    from runner.replay.keep import SECRETS_FILE

    outcomes = iter([1, 1, 1])
    engine: FakeEngine

    def run(spec: RunSpec) -> RunResult:
        if probe(spec):
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


@pytest.mark.parametrize("shell", [["/bin/dash"], ["/usr/bin/busybox", "sh"], ["/bin/bash", "--posix"]])
def test_the_env_file_is_read_by_a_posix_sh_without_perl_argv_and_values_exact(tmp_path: Path,
                                                                             shell: list[str]) -> None:
    """Alpine has no perl: the wrapper is the image's own sh (dash on Debian, busybox ash on Alpine, bash on
    Fedora). Run here with no perl on PATH (the file at a temporary path, not the container's /): the
    values arrive exactly, nothing else is added to the environment (PWD, PATH: not set by the run), the
    file is gone, argv is exactly as recorded and no word of it is expanded."""
    import os
    import shutil
    import subprocess
    import sys

    from runner.engine import ContainerFile
    from runner.replay.keep import SECRETS_FILE, secrets_at_run_time
    from tests.services import missing

    if not os.path.exists(shell[0]):
        missing(f"needs {shell[0]} (Debian: apt-get install -y busybox; scripts/setup installs it)")
    bin_dir = tmp_path / "bin"  # rm only: no perl
    bin_dir.mkdir()
    os.symlink(shutil.which("rm") or "/bin/rm", bin_dir / "rm")
    values = {"API_TOKEN": "it's $(touch /tmp/x) `id` \\ \" \n second line\n", "EMPTY": "", "UNI": "é€"}
    shown = "import json, os, sys; print(json.dumps([sys.argv[1:], dict(os.environ)]))"
    argv = (sys.executable, "-c", shown, "$HOME", "a b", "'q'", "", "*", "$(id)")
    spec = RunSpec(image="i", argv=argv, env=(("PATH", str(bin_dir)), ("LANG", "C.UTF-8"), *values.items()),
                   keep=True)
    out = secrets_at_run_time(spec, list(values))
    assert out.env == (("PATH", str(bin_dir)), ("LANG", "C.UTF-8")) and out.argv[-len(argv):] == argv
    (file,) = [f for f in out.files if isinstance(f, ContainerFile) and f.path == SECRETS_FILE]
    here = tmp_path / "replay-env"
    here.write_bytes(file.data)
    script = out.argv[2].replace(SECRETS_FILE, str(here))
    proc = subprocess.run([*shell, "-c", script, *out.argv[3:]], env=dict(out.env), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    got_argv, got_env = json.loads(proc.stdout)
    if shell[0].endswith("bash"):  # bash's exec sets SHLVL=0 whatever the script does (docs/after.md)
        assert got_env.pop("SHLVL") == "0"
    assert got_argv == list(argv[3:]) and got_env == {**dict(out.env), **values}
    assert not here.exists()
