"""`replay shell` on the fake engine: the shell's container as an attempt's (its world), the recorded
command in its history; --kept / --last: the kept container committed, the temporary image removed."""
from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

import pytest

from runner.build.plan import PlanOptions
from runner.engine import KEPT_LABEL, LABEL, OWNER_LABEL, USER_LABEL, RunResult, RunSpec
from runner.engine.docker import owner
from runner.errors import UsageError
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.replay.shell import HISTORY, open_shell

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine

ARGV = tuple(json.loads(TZ_CAPSULE.read_text())["command"]["argv"])


def _engine() -> FakeEngine:
    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        return RunResult(1, b"boom\n", b"boom\n", 0.5)
    return FakeEngine(run=run, images=["replay-base/debian:bookworm"])


def _kept(engine: FakeEngine) -> str:
    opts = ReplayOptions(attempts=1, keep=True, plan=PlanOptions(repo=str(BUNDLE)))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(), engine=engine)
    assert report.kept is not None
    return report.kept.id


def _shell(engine: FakeEngine, capsule: str | None = None, **how: object) -> tuple[int, list[str]]:
    said: list[str] = []
    opts = ReplayOptions(plan=PlanOptions(repo=str(BUNDLE)))
    rc = open_shell(capsule, opts, Progress(), said.append, engine=engine, **how)  # type: ignore[arg-type]
    return rc, said


def _history(spec: RunSpec) -> str:
    return next(f.data.decode() for f in spec.files if f.path == HISTORY)


@pytest.mark.usefixtures("offline_registry")
def test_the_shell_gets_the_attempts_world_and_the_recorded_command() -> None:
    engine = _engine()
    rc, said = _shell(engine, str(TZ_CAPSULE))
    (spec,) = engine.interactive_specs
    assert rc == 0 and spec.argv[-1] == "bash" and spec.tty and spec.stdin_open and not spec.keep
    env = dict(spec.env)
    assert env["TZ"] == "America/New_York" and env["HISTFILE"] == HISTORY
    assert _history(spec) == shlex.join(ARGV) + "\n"
    assert f"recorded command (the shell's history: Up): {shlex.join(ARGV)}" in said
    assert KEPT_LABEL not in dict(spec.labels)


@pytest.mark.usefixtures("offline_registry")
def test_kept_enters_the_kept_state_through_a_temporary_image() -> None:
    engine = _engine()
    kept = _kept(engine)
    for how in ({"kept": kept}, {"last": True}):
        engine.interactive_specs.clear()
        rc, _ = _shell(engine, **how)
        (spec,) = engine.interactive_specs
        container, ref = engine.commits[-1]
        assert rc == 0 and container == kept and spec.image == ref and ref.split(":")[1].startswith("shell-")
        assert ref not in engine.images  # removed once the shell ended
        assert _history(spec) == shlex.join(ARGV) + "\n"  # the world from the plan on the kept container
        assert dict(spec.env)["TZ"] == "America/New_York"
    assert kept in engine.containers  # the kept container stays, for another shell or `replay gc`


@pytest.mark.parametrize("how, says", [
    ({"kept": "../etc"}, "--kept '../etc': a container id"),
    ({"kept": "abcdef123456"}, "--kept abcdef123456: no container `replay --keep` kept has this id"),
    ({"last": True}, "--last: no kept container of"),
])
def test_no_kept_container_is_a_usage_error(how: dict[str, object], says: str) -> None:
    engine = _engine()
    engine.containers["abcdef123456"] = {LABEL: "r-1"}  # replay's, but not kept
    with pytest.raises(UsageError, match=says.replace("(", r"\(")):
        _shell(engine, **how)
    assert engine.interactive_specs == []


@pytest.mark.usefixtures("offline_registry")
def test_last_and_kept_are_the_current_users_own() -> None:
    """Another user's kept container is newer: --last skips it, --kept ID refuses it (exit 2)."""
    engine = _engine()
    mine = _kept(engine)
    theirs = "0fe000000001"
    engine.containers[theirs] = {**engine.containers[mine], USER_LABEL: "someone-else"}
    _shell(engine, last=True)
    assert engine.commits[-1][0] == mine
    with pytest.raises(UsageError, match="kept by someone-else, not ") as exc:
        _shell(engine, kept=theirs)
    assert exc.value.exit_code == 2


@pytest.mark.usefixtures("offline_registry")
def test_the_shells_image_carries_its_owner_and_the_kept_label_gc_sweeps() -> None:
    engine = _engine()
    kept = _kept(engine)
    labels: list[dict[str, str]] = []
    commit = engine.commit

    def recording(container: str, ref: str, given: Mapping[str, str]) -> str:
        labels.append(dict(given))
        return commit(container, ref, given)
    engine.commit = recording  # type: ignore[method-assign]
    _shell(engine, kept=kept)
    (given,) = labels
    assert given[KEPT_LABEL] == "shell" and given[OWNER_LABEL] == owner() and given[LABEL].startswith("r-")
