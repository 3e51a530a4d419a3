"""An attempt when the engine connection drops under it (fault injection on the SDK client: a
shared engine cannot be restarted safely): a short drop is waited through on the same container,
one that does not come back ends in one line (exit 3), and the container is removed either way."""
from __future__ import annotations

from typing import Any

import pytest
import requests

from runner.engine.docker import DockerEngine
from runner.engine.protocol import RunSpec
from runner.errors import EngineUnavailable, Exit


class Container:
    id = "c0ffee"

    def __init__(self, drops: int) -> None:
        self.drops, self.waits, self.removed = drops, 0, 0
        self.attrs: dict[str, Any] = {"State": {"OOMKilled": False}}

    def start(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> dict[str, int]:
        self.waits += 1
        if self.waits <= self.drops:
            raise requests.exceptions.ConnectionError("('Connection aborted.', RemoteDisconnected())")
        return {"StatusCode": 3}

    def reload(self) -> None:
        pass

    def logs(self, stdout: bool = True, stderr: bool = True) -> bytes:
        return b"out\n"

    def remove(self, force: bool = False) -> None:
        self.removed += 1


class Client:
    def __init__(self, ctr: Container) -> None:
        self.ctr = ctr
        self.containers = self

    def create(self, **kwargs: Any) -> Container:
        return self.ctr


def _engine(ctr: Container) -> DockerEngine:
    engine = DockerEngine.__new__(DockerEngine)  # no engine here: the client is the fault injector
    engine.client = Client(ctr)
    return engine


def test_a_short_drop_is_waited_through_on_the_same_container() -> None:
    ctr = Container(drops=1)
    result = _engine(ctr).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert (result.exit_code, result.output, ctr.waits) == (3, b"out\n", 2)
    assert ctr.removed == 1


def test_a_connection_that_does_not_come_back_is_one_line_exit_3() -> None:
    ctr = Container(drops=99)
    with pytest.raises(EngineUnavailable) as info:
        _engine(ctr).run(RunSpec(image="img", argv=("true",), timeout_s=60))
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert info.value.line().startswith("the engine connection dropped during an attempt and did not come back")
    assert "\n" not in info.value.line()
    assert ctr.removed == 1  # no leftover container
