"""An attempt when the engine connection drops under it (fault injection on the SDK client; the real
restart and crash are tests/integration/test_engine_restart.py, on an engine of their own): a short
drop with the container still running is waited through on the same container, a container that
ended while the engine was away runs again in a fresh one, an engine that does not come back ends in
one line (exit 3), and the container is removed either way."""
from __future__ import annotations

from typing import Any

import pytest
import requests

from runner.engine import docker as docker_engine
from runner.engine.docker import RUN_TRIES, DockerEngine
from runner.engine.protocol import RunSpec
from runner.errors import EngineUnavailable, Exit


class Container:
    id = "c0ffee"

    def __init__(self, drops: int, status_after_drop: str = "running") -> None:
        self.drops, self.waits, self.removed, self.created = drops, 0, 0, 0
        self.status = "running"
        self.status_after_drop = status_after_drop
        self.attrs: dict[str, Any] = {"State": {"OOMKilled": False}}

    def start(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> dict[str, int]:
        self.waits += 1
        if self.waits <= self.drops:
            self.status = self.status_after_drop
            raise requests.exceptions.ConnectionError("('Connection aborted.', RemoteDisconnected())")
        self.status = "exited"
        return {"StatusCode": 3}

    def reload(self) -> None:
        pass

    def logs(self, stdout: bool = True, stderr: bool = True) -> bytes:
        return b"out\n"

    def remove(self, force: bool = False) -> None:
        self.removed += 1


class Client:
    def __init__(self, ctr: Container, answers: bool) -> None:
        self.ctr, self.answers = ctr, answers
        self.containers = self

    def create(self, **kwargs: Any) -> Container:
        self.ctr.created += 1
        self.ctr.status = "created"
        return self.ctr

    def ping(self) -> bool:
        if not self.answers:
            raise requests.exceptions.ConnectionError("connection refused")
        return True


def _engine(ctr: Container, answers: bool = True) -> DockerEngine:
    engine = DockerEngine.__new__(DockerEngine)  # no engine here: the client is the fault injector
    engine.client = Client(ctr, answers)
    return engine


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_engine, "ENGINE_RETURN_S", 0.5)  # how long an engine that went away is waited for


def test_a_short_drop_is_waited_through_on_the_same_container() -> None:
    ctr = Container(drops=1)
    result = _engine(ctr).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert (result.exit_code, result.output, ctr.waits) == (3, b"out\n", 2)
    assert ctr.removed == 1 and ctr.created == 1 and result.reruns == 0


def test_a_container_that_ended_while_the_engine_was_away_runs_again() -> None:
    ctr = Container(drops=1, status_after_drop="exited")  # a restart stops the running containers
    result = _engine(ctr).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert (result.exit_code, result.reruns, ctr.created) == (3, 1, 2)
    assert ctr.removed == 2  # the lost run's container too


def test_an_attempt_lost_on_every_run_is_one_line_exit_3() -> None:
    ctr = Container(drops=99, status_after_drop="exited")
    with pytest.raises(EngineUnavailable) as info:
        _engine(ctr).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert ctr.created == RUN_TRIES and ctr.removed == RUN_TRIES
    assert "the engine went away during an attempt" in info.value.line() and "again on its rerun" in info.value.line()


def test_a_connection_that_does_not_come_back_is_one_line_exit_3() -> None:
    ctr = Container(drops=99)
    with pytest.raises(EngineUnavailable) as info:
        _engine(ctr, answers=False).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert info.value.line().startswith("the engine connection dropped during an attempt and did not come back")
    assert "\n" not in info.value.line()
    assert ctr.removed == 1  # no leftover container


class RefusingImages:
    """An engine that answers every image call with an error no retry covers."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.images = self

    def get(self, ref: str) -> Any:
        raise self.exc


@pytest.mark.parametrize("exc", [
    __import__("docker").errors.APIError("409 Client Error: Conflict (the image is in use)"),
    requests.exceptions.ConnectionError("('Connection aborted.', RemoteDisconnected())"),
    requests.exceptions.ReadTimeout("read timed out"),
])
def test_no_sdk_error_leaves_an_engine_method_untyped(exc: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every public method of the engine raises replay's errors only: the CLI's edge never sees the SDK's."""
    monkeypatch.setattr(docker_engine, "retrying", lambda fn: fn)  # one try: the retry's own tests are above
    engine = DockerEngine.__new__(DockerEngine)
    engine.client = RefusingImages(exc)
    with pytest.raises(EngineUnavailable) as info:
        engine.tag("replay/img:a", "replay/img:b")
    assert info.value.exit_code == Exit.ENVIRONMENT and "\n" not in info.value.line()
    assert "replay doctor" in info.value.line()
