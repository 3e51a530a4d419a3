"""Builds when the engine fails under them (fault injection: a real engine cannot be made to drop
its connection or fill its disk safely on a shared machine): a dropped connection is built again,
one that keeps dropping and a full disk end in one line (exit 3)."""
from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from runner.engine import builders
from runner.errors import BuildFailed, Exit

DISK_FULL = "failed to register layer: write /var/lib/docker/overlay2/x/diff/f: no space left on device"


@pytest.fixture
def context(tmp_path: Path) -> Path:
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text("FROM scratch\n")
    return ctx


class FlakyClient:
    """The SDK client: its build stream breaks off `drops` times (the daemon went away), then works."""

    def __init__(self, drops: int, chunks: list[dict[str, Any]] | None = None) -> None:
        self.calls, self.drops = 0, drops
        self.chunks = chunks or [{"stream": "Step 1/1 : FROM scratch\n"}, {"aux": {"ID": "sha256:ok"}}]
        self.api = self

    def build(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.calls += 1
        if self.calls <= self.drops:
            return self._broken()
        return iter(self.chunks)

    @staticmethod
    def _broken() -> Iterator[dict[str, Any]]:
        yield {"stream": "Step 1/1 : FROM scratch\n"}
        raise requests.exceptions.ConnectionError("Connection aborted: RemoteDisconnected")


def test_a_dropped_engine_connection_is_built_again(context: Path) -> None:
    client = FlakyClient(drops=1)
    events = list(builders.build_with_sdk(client, context, "t:1", {}, "default"))
    assert client.calls == 2
    assert events[-1].kind == "done" and events[-1].image_id == "sha256:ok"
    assert any("building again" in e.text for e in events if e.kind == "log")


def test_an_engine_that_keeps_dropping_is_one_line_exit_3(context: Path) -> None:
    client = FlakyClient(drops=99)
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_sdk(client, context, "t:1", {}, "default"))
    assert client.calls == builders.BUILD_TRIES
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert "engine connection dropped 3 times during the build" in info.value.line()
    assert "\n" not in info.value.line()


def test_a_full_disk_says_so_and_how_to_free_space(context: Path) -> None:
    client = FlakyClient(drops=0, chunks=[{"stream": "Step 1/1 : FROM scratch\n"}, {"error": DISK_FULL}])
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_sdk(client, context, "t:1", {}, "default"))
    line = info.value.line()
    assert client.calls == 1  # a full disk is not retried: it stays full
    assert "disk is full" in line and "replay gc" in line and "docker builder prune" in line
    assert info.value.exit_code == Exit.ENVIRONMENT and "\n" not in line


# The docker CLI (BuildKit) stand-in: prints what the real one prints when the engine goes away or
# the disk fills, exits 1; on a later call (the counter file) it builds.
FAKE_CLI = r'''
import sys, pathlib
state = pathlib.Path(sys.argv[1]); mode = sys.argv[2]; args = sys.argv[3:]
n = int(state.read_text()) if state.exists() else 0
state.write_text(str(n + 1))
print("#1 [internal] load build definition from Dockerfile", flush=True)
if mode == "disk":
    print("#5 ERROR: failed to copy: write /var/lib/docker/tmp/x: no space left on device")
    sys.exit(1)
if mode == "hook" and n == 0:  # a step started as the engine was stopping
    print("#7 0.128 runc run failed: unable to start container process: error during container init: error "
          "running hook #0: error running hook: exit status 1, stdout: , stderr: level=fatal msg=\"dial unix "
          "/run/docker/libnetwork/87937d7e8e33.sock: connect: no such file or directory\"")
    print("#7 ERROR: executor failed running [/bin/sh -c apt-get update]: exit code: 1")
    sys.exit(1)
if mode == "noiid" and n == 0:  # what the real CLI does when the daemon is stopped under it
    print("cannot write /tmp/x/iid because server did not provide an image ID")
    sys.exit(0)
if mode in ("drop", "once") and (mode == "drop" or n == 0):
    print("error during connect: Post http://docker/v1.41/build: read unix @->/var/run/docker.sock: "
          "read: connection reset by peer")
    sys.exit(1)
pathlib.Path(args[args.index("--iidfile") + 1]).write_text("sha256:built\n")
print("#2 [1/1] FROM scratch")
'''


def _cli(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "fake-docker.py"
    script.write_text(FAKE_CLI)
    return [sys.executable, str(script), str(tmp_path / "calls"), mode]


def _calls(tmp_path: Path) -> int:
    return int((tmp_path / "calls").read_text())


def test_the_buildkit_cli_losing_the_engine_is_built_again(context: Path, tmp_path: Path) -> None:
    events = list(builders.build_with_cli(_cli(tmp_path, "once"), context, "t:1", {}, "default"))
    assert _calls(tmp_path) == 2 and events[-1].image_id == "sha256:built"


def test_a_build_the_engine_stopped_under_is_built_again_once_it_answers(context: Path, tmp_path: Path) -> None:
    asked: list[float] = []

    def engine_back(within: float) -> bool:
        asked.append(within)
        return len(asked) > 1  # away when the build ends, back when waited for

    events = list(builders.build_with_cli(_cli(tmp_path, "noiid"), context, "t:1", {}, "default", engine_back))
    assert _calls(tmp_path) == 2 and events[-1].image_id == "sha256:built"
    assert asked == [0, builders.ENGINE_RETURN_S]


def test_a_step_the_stopping_engine_could_not_start_is_built_again(context: Path, tmp_path: Path) -> None:
    events = list(builders.build_with_cli(_cli(tmp_path, "hook"), context, "t:1", {}, "default"))
    assert _calls(tmp_path) == 2 and events[-1].image_id == "sha256:built"


def test_an_engine_that_does_not_come_back_ends_the_build_in_one_line(context: Path, tmp_path: Path) -> None:
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_cli(_cli(tmp_path, "noiid"), context, "t:1", {}, "default", lambda _w: False))
    assert _calls(tmp_path) == 1
    assert "did not answer again within 60 s" in info.value.line() and info.value.exit_code == Exit.ENVIRONMENT


def test_the_buildkit_cli_that_keeps_losing_it_is_one_line(context: Path, tmp_path: Path) -> None:
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_cli(_cli(tmp_path, "drop"), context, "t:1", {}, "default"))
    assert _calls(tmp_path) == builders.BUILD_TRIES
    assert "connection dropped 3 times" in info.value.line() and "connection reset by peer" in info.value.line()


def test_the_buildkit_cli_on_a_full_disk(context: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_cli(_cli(tmp_path, "disk"), context, "t:1", {}, "default"))
    assert _calls(tmp_path) == 1
    assert "disk is full" in info.value.line() and "replay gc" in info.value.line()
    assert not list(scratch.iterdir())  # the build's temporary directory (secrets, iid) went with it


# -- REPLAY_BUILD_TIMEOUT: a build that never ends is stopped (a registry dribbling a byte a second,
#    a step stuck on a full disk: no socket timeout fires) -------------------------------------------

def test_a_buildkit_build_past_its_limit_is_stopped(context: Path) -> None:
    import subprocess
    import time

    from runner.errors import BuildTimedOut

    # the docker CLI's stand-in: a step starts, then nothing more, ever (its sleep is what gets killed)
    marker = f"replay-test-stall-{time.time_ns()}"
    cli = [sys.executable, "-c", "import sys, time; print('#7 [stage-2 5/9] RUN npm ci', flush=True); "
           f"print('#7 1.2 npm http fetch', flush=True); time.sleep(600)  # {marker}"]
    started = time.monotonic()
    with pytest.raises(BuildTimedOut) as caught:
        list(builders.build_with_cli(cli, context, "t", {}, "default", timeout_s=1.0))
    assert time.monotonic() - started < 60
    assert caught.value.exit_code == Exit.ENVIRONMENT
    assert "did not finish within 1 s (REPLAY_BUILD_TIMEOUT)" in caught.value.message
    assert caught.value.step == "RUN npm ci"
    assert marker not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout  # killed


def test_a_classic_build_past_its_limit_has_its_step_container_killed(context: Path) -> None:
    import threading

    from runner.errors import BuildTimedOut

    killed = threading.Event()

    class StalledClient:
        def __init__(self) -> None:
            self.api = self
            self.kills: list[str] = []

        def build(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
            yield {"stream": "Step 5/9 : RUN pip install -r requirements.txt\n"}
            yield {"stream": " ---> Running in 0123456789ab\n"}
            assert killed.wait(60), "the deadline never killed the step's container"
            yield {"error": "The command '/bin/sh -c pip install' returned a non-zero code: 137"}

        def kill(self, container: str) -> None:
            self.kills.append(container)
            killed.set()

    client = StalledClient()
    with pytest.raises(BuildTimedOut) as caught:
        list(builders.build_with_sdk(client, context, "t", {}, "default", timeout_s=0.5))
    assert client.kills == ["0123456789ab"]
    assert caught.value.step == "RUN pip install -r requirements.txt"


def test_a_build_within_its_limit_is_not_touched(context: Path) -> None:
    events = list(builders.build_with_sdk(FlakyClient(0), context, "t", {}, "none", timeout_s=30.0))
    assert events[-1].kind == "done" and events[-1].image_id == "sha256:ok"


@pytest.mark.parametrize(("raw", "seconds"), [("3600", 3600.0), ("90.5", 90.5), ("0", None), ("none", None)])
def test_the_build_timeout_setting(monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float | None) -> None:
    from runner.config import settings

    monkeypatch.setenv("REPLAY_BUILD_TIMEOUT", raw)
    assert settings().build_timeout_s == seconds


@pytest.mark.parametrize("raw", ["soon", "-5", "nan", "inf"])
def test_a_bad_build_timeout_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    from runner.config import settings
    from runner.errors import UsageError

    monkeypatch.setenv("REPLAY_BUILD_TIMEOUT", raw)
    with pytest.raises(UsageError, match="REPLAY_BUILD_TIMEOUT"):
        _ = settings().build_timeout_s


def _classic(chunks: list[Any], until: Any = None) -> Any:
    """An SDK client whose build stream yields `chunks`, waiting for `until` (an Event) where a chunk is None."""
    class Client:
        def __init__(self) -> None:
            self.api = self
            self.kills: list[str] = []

        def build(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
            for chunk in chunks:
                if chunk is None:
                    assert until.wait(60)
                    continue
                yield chunk

        def kill(self, container: str) -> None:
            self.kills.append(container)

    return Client()


def test_a_classic_build_past_its_limit_outside_a_run_step_stops_at_the_next_run_step(context: Path) -> None:
    import threading

    from runner.errors import BuildTimedOut

    passed = threading.Event()
    client = _classic([{"stream": "Step 3/9 : COPY deps/ /work/repo/\n"}, None,  # the limit passes in a COPY
                       {"stream": "Step 4/9 : RUN npm ci\n"}, {"stream": " ---> Running in 0123456789ab\n"},
                       {"error": "The command '/bin/sh -c npm ci' returned a non-zero code: 137"}], passed)
    deadline_passed = threading.Timer(0.6, passed.set)
    deadline_passed.start()
    with pytest.raises(BuildTimedOut) as caught:
        list(builders.build_with_sdk(client, context, "t", {}, "default", timeout_s=0.3))
    assert client.kills == ["0123456789ab"]  # killed as it started
    assert caught.value.step == "RUN npm ci"


def test_a_build_that_finished_as_its_limit_passed_is_a_build(context: Path) -> None:
    import threading

    passed = threading.Event()
    client = _classic([{"stream": "Step 3/3 : COPY src/ /work/repo/\n"}, None, {"aux": {"ID": "sha256:built"}}],
                      passed)
    threading.Timer(0.6, passed.set).start()
    events = list(builders.build_with_sdk(client, context, "t", {}, "default", timeout_s=0.3))
    assert events[-1].kind == "done" and events[-1].image_id == "sha256:built"
