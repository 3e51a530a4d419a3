"""Kept containers and read-back files on the engine, faults injected: an id the user gave that names several
containers is the user's fault (exit 2), one that names none is no container."""
from __future__ import annotations

from typing import Any

import docker.errors
import pytest
import requests

from runner.engine.kept import KeptContainers
from runner.errors import Exit, UsageError


class _Containers:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def get(self, container_id: str) -> Any:
        raise self.exc


def _kept(exc: Exception) -> KeptContainers:
    kept = KeptContainers()
    kept.client = type("Client", (), {"containers": _Containers(exc)})()
    return kept


def _api_error(status: int, explanation: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError("engine said no", response=response, explanation=explanation)


def test_a_prefix_of_several_containers_is_bad_input() -> None:
    with pytest.raises(UsageError, match="multiple IDs found") as caught:
        _kept(_api_error(400, "multiple IDs found with provided prefix: 3f2a")).container_labels("3f2a")
    assert caught.value.exit_code == Exit.BAD_INPUT


def test_no_such_container_is_none() -> None:
    assert _kept(docker.errors.NotFound("no such container")).container_labels("3f2a1c9d0b7e") is None


def test_a_report_the_engine_cannot_stat_is_left_out_not_an_engine_failure() -> None:
    """A JUnit path the capsule names that the engine cannot stat (a file used as a folder: 500)."""
    from runner.engine.docker import DockerEngine

    class Api:
        def get_archive(self, container_id: str, path: str) -> Any:
            raise _api_error(500, "lstat /work/repo/package.json/report.xml: not a directory")

    engine = DockerEngine.__new__(DockerEngine)  # no engine here: the client is the fault injector
    engine.client = type("Client", (), {"api": Api()})()
    assert engine._read_back("c1", "/work/repo/package.json/report.xml") is None
