"""Registry credentials reach a build only as BuildKit secrets: never in the Dockerfile, never
as a build argument, and the classic builder (which has no secrets) refuses them."""
from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest

from runner.capsules import read_capsule
from runner.config import NPM_SECRET, PYPI_SECRET, origins, registry_secrets, settings
from runner.engine import builders
from runner.secretrules import mask_url
from runner.errors import BuildFailed, Exit
from runner.build.plan import PlanOptions
from runner.build.planner import make_plan
from runner.build.render import render

from tests.examples import TZ_CAPSULE

MARKER = "tok-3f9c1d77e0"


@pytest.fixture(autouse=True)
def _offline(offline_registry: None) -> None:
    """No engine, no registry."""


def test_credentials_are_taken_out_of_the_url() -> None:
    assert mask_url(f"https://bob:{MARKER}@npm.example.com:8443/r/") == "https://npm.example.com:8443/r/"
    assert mask_url("https://registry.npmjs.org") == "https://registry.npmjs.org"


def test_the_secrets_hold_the_credentials_in_each_tool_s_own_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"https://bob:{MARKER}@npm.example.com/r/")
    monkeypatch.setenv("REPLAY_PYPI_INDEX", f"https://alice:{MARKER}@pypi.example.com/simple")
    secrets = registry_secrets(settings())
    token = base64.b64encode(f"bob:{MARKER}".encode()).decode()
    assert f"//npm.example.com/r/:_auth={token}" in secrets[NPM_SECRET]
    assert secrets[PYPI_SECRET] == f"machine pypi.example.com\nlogin alice\npassword {MARKER}\n"
    assert not any(MARKER in o.value for o in origins())  # `replay doctor` shows the registry, not the token


def test_no_credentials_no_secrets() -> None:
    assert registry_secrets(settings()) == {}


def _plan() -> Any:
    return make_plan(read_capsule(TZ_CAPSULE), settings(), PlanOptions())


def test_the_dockerfile_names_the_registry_and_mounts_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"https://bob:{MARKER}@npm.example.com/r")
    dockerfile = render(_plan(), settings(), "buildkit")
    assert MARKER not in dockerfile and "bob" not in dockerfile
    npm_ci = next(line for line in dockerfile.splitlines() if "--mount=type=secret" in line)
    assert f"--mount=type=secret,id={NPM_SECRET},target=/root/.npmrc,required=true" in npm_ci
    assert "--registry=https://npm.example.com/r" in dockerfile
    assert "ARG " not in dockerfile


def test_without_credentials_nothing_is_mounted() -> None:
    assert "type=secret" not in render(_plan(), settings(), "buildkit")


def test_the_secret_files_are_private_and_go_with_the_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"https://bob:{MARKER}@npm.example.com/r")
    flags = builders._secret_flags(tmp_path)
    assert flags[0] == "--secret" and flags[1] == f"id={NPM_SECRET},src={tmp_path / NPM_SECRET}"
    assert MARKER not in " ".join(flags)  # the command line names the file, never the value
    assert stat.S_IMODE((tmp_path / NPM_SECRET).stat().st_mode) == 0o600


class _NoBuild:
    class api:  # noqa: N801 - mimics the SDK's client.api
        @staticmethod
        def build(**kwargs: Any) -> Any:
            raise AssertionError("the classic builder must not be given the credentials")


def test_the_classic_builder_refuses_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"https://bob:{MARKER}@npm.example.com/r")
    (tmp_path / "Dockerfile").write_text(render(_plan(), settings(), "classic"))
    with pytest.raises(BuildFailed) as info:
        list(builders.build_with_sdk(_NoBuild(), tmp_path, "t:1", {}, "default"))
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert "REPLAY_NPM_REGISTRY holds credentials" in info.value.line() and MARKER not in info.value.line()
    assert "\n" not in info.value.line()


def test_a_build_that_needs_no_registry_is_not_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"https://bob:{MARKER}@npm.example.com/r")
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    stream = [{"stream": "Step 1/1 : FROM scratch\n"}, {"aux": {"ID": "sha256:abc"}}]

    class Client:
        class api:  # noqa: N801
            @staticmethod
            def build(**kwargs: Any) -> Any:
                return iter(stream)

    events = list(builders.build_with_sdk(Client(), tmp_path, "t:1", {}, "default"))
    assert events[-1].image_id == "sha256:abc"


def test_doctor_probes_and_shows_the_registry_without_its_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from runner.machine.doctor import _registry

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    check = _registry(settings(), "npm registry", f"http://bob:{MARKER}@127.0.0.1:{port}/")
    assert check.detail.startswith(f"http://127.0.0.1:{port}/: unreachable") and MARKER not in check.detail
